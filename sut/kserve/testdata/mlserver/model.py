"""A custom MLServer runtime for aimeter's interoperability test: it takes
the FP32 input "input" of shape [N, 784] and returns the FP32 output
"logits" of shape [N, 10], logit i being the sum of pixels 78*i to 78*i+77.
The Go test computes the same top-1 class itself."""
import numpy as np
from mlserver import MLModel
from mlserver.codecs import NumpyCodec
from mlserver.types import InferenceRequest, InferenceResponse


class SliceSums(MLModel):
    async def load(self) -> bool:
        return True

    async def predict(self, payload: InferenceRequest) -> InferenceResponse:
        x = NumpyCodec.decode_input(payload.inputs[0]).reshape(-1, 784)
        logits = np.stack([x[:, 78 * i:78 * i + 78].sum(axis=1) for i in range(10)], axis=1).astype(np.float32)
        return InferenceResponse(model_name=self.name, id=payload.id,
                                 outputs=[NumpyCodec.encode_output("logits", logits)])
