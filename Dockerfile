# BERT Lens in a container: CPU-only torch, bert-base-uncased prefetched at build time, port 8501.
#   docker build -t bert-lens . && docker run -p 8501:8501 bert-lens
# Also runs as a Hugging Face Space (Docker SDK, app_port: 8501): see docs/running-a-class.md, "Deploying".
FROM python:3.11-slim

ENV PIP_NO_CACHE_DIR=1 \
    PYTHONUNBUFFERED=1

# CPU-only torch first (the default Linux wheel pulls several GB of CUDA libraries), then the pins;
# pip keeps torch 2.13.0+cpu because it satisfies requirements.txt's torch==2.13.0.
COPY requirements.txt /tmp/requirements.txt
RUN pip install --index-url https://download.pytorch.org/whl/cpu torch==2.13.0 \
 && pip install -r /tmp/requirements.txt

# Hugging Face Spaces run the container as user id 1000: give it a home that holds the model cache.
RUN useradd --create-home --uid 1000 user
USER user
ENV HOME=/home/user \
    PATH=/home/user/.local/bin:$PATH \
    HF_HOME=/home/user/.cache/huggingface
WORKDIR /home/user/app

# Prefetch bert-base-uncased (PyTorch weights and tokenizer only) into the image's Hugging Face cache.
RUN hf download bert-base-uncased config.json vocab.txt tokenizer.json tokenizer_config.json model.safetensors

# The app, with its serving configuration (.streamlit/config.toml: file watcher off, message limits).
COPY --chown=user . .

# Public-link defaults (override with `docker run -e …`): hosted mode (allowlist: bert-base-uncased and
# the bundled encoder, input caps, no custom models) and no Hub access at run time.
ENV BERTLENS_HOSTED=1 \
    BERTLENS_MODEL=bert-base-uncased \
    HF_HUB_OFFLINE=1
EXPOSE 8501
HEALTHCHECK CMD python -c "import urllib.request; urllib.request.urlopen('http://localhost:8501/_stcore/health')"
CMD ["streamlit", "run", "app.py", "--server.port=8501", "--server.address=0.0.0.0", "--server.headless=true"]
