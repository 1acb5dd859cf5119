"""Builds the small tokenizer.json files of the tests and their reference
encodings with Hugging Face's own library (PyPI tokenizers 0.22.1):

    python3 -m venv venv && venv/bin/pip install tokenizers==0.22.1
    venv/bin/python make_reference.py

It writes gpt2-style.json (ByteLevel pre-tokenizer with its regex),
llama3-style.json (a Split regex of Llama 3, ByteLevel without regex,
ignore_merges, NFC) and reference.json (the ids of every text of texts.txt
under each tokenizer, with add_special_tokens=False)."""

import json
from tokenizers import Tokenizer, Regex, models, pre_tokenizers, decoders, normalizers, trainers

CORPUS = """The quick brown fox jumps over the lazy dog. It's what they've said: we'll see, I'm sure, they'd know.
Tokenizers split text into pieces; a benchmark counts them. 12345 67890 3.14159 2026-11-27
Café crème brûlée, naïve façade — déjà vu! 東京 北京 上海 😀🚀 tabs\tand\nnew lines   spaced   out.
vLLM SGLang TensorRT-LLM Ollama serve models; requests, tokens, latency, throughput, goodput.
""" * 3

LLAMA3 = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"


def train(tok, name):
    trainer = trainers.BpeTrainer(vocab_size=600, min_frequency=1,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                                  special_tokens=["<|endoftext|>"])
    tok.train_from_iterator([CORPUS], trainer=trainer)
    tok.decoder = decoders.ByteLevel()
    tok.save(name)
    return tok


gpt2 = Tokenizer(models.BPE())
gpt2.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
gpt2 = train(gpt2, "gpt2-style.json")

llama = Tokenizer(models.BPE(ignore_merges=True))
llama.normalizer = normalizers.NFC()
llama.pre_tokenizer = pre_tokenizers.Sequence([
    pre_tokenizers.Split(Regex(LLAMA3), behavior="isolated", invert=False),
    pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
])
llama = train(llama, "llama3-style.json")

texts = [json.loads(l) for l in open("texts.jsonl", encoding="utf-8")]
ref = {"tokenizers_version": __import__("tokenizers").__version__, "cases": []}
for t in texts:
    ref["cases"].append({
        "text": t,
        "gpt2-style.json": gpt2.encode(t, add_special_tokens=False).ids,
        "llama3-style.json": llama.encode(t, add_special_tokens=False).ids,
    })
with open("reference.json", "w", encoding="utf-8") as f:
    json.dump(ref, f, ensure_ascii=False, indent=1)
    f.write("\n")
