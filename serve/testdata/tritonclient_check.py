"""Calls aimeter serve kserve with NVIDIA's tritonclient, over HTTP (JSON
and binary tensors) and gRPC, and prints the top-1 class of each call.

Usage: python tritonclient_check.py HTTP_ADDR GRPC_ADDR
The input is the 784 values 0, 1/783, 2/783, ...; the Go test compares the
classes with the model's own prediction.
"""
import sys

import numpy as np
import tritonclient.grpc as grpcclient
import tritonclient.http as httpclient

http_addr, grpc_addr = sys.argv[1], sys.argv[2]
x = (np.arange(784, dtype=np.float32) / 783).reshape(1, 784)

h = httpclient.InferenceServerClient(url=http_addr)
assert h.is_server_live() and h.is_server_ready() and h.is_model_ready("fashion-mlp")
meta = h.get_model_metadata("fashion-mlp")
assert meta["inputs"][0]["name"] == "input", meta
for binary in (False, True):
    inp = httpclient.InferInput("input", [1, 784], "FP32")
    inp.set_data_from_numpy(x, binary_data=binary)
    out = httpclient.InferRequestedOutput("logits", binary_data=binary)
    res = h.infer("fashion-mlp", [inp], outputs=[out], request_id="7")
    logits = res.as_numpy("logits")
    assert logits.shape == (1, 10), logits.shape
    print("http-binary" if binary else "http-json", int(np.argmax(logits[0])))

g = grpcclient.InferenceServerClient(url=grpc_addr)
assert g.is_server_live() and g.is_server_ready() and g.is_model_ready("fashion-mlp")
inp = grpcclient.InferInput("input", [1, 784], "FP32")
inp.set_data_from_numpy(x)
res = g.infer("fashion-mlp", [inp], outputs=[grpcclient.InferRequestedOutput("logits")])
print("grpc", int(np.argmax(res.as_numpy("logits")[0])))
