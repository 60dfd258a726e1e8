"""Reading one of our JSON documents (transformer_bench --json, transformer_profile --out)
with a clear exit message when the file is missing, malformed or of another schema, and
the rows of transformer_bench's gpuprof.bench file."""
import json
import sys
import os


def load_document(path, schema):
    program = os.path.basename(sys.argv[0])
    try:
        with open(path, encoding="utf-8") as f:
            document = json.load(f)
    except (OSError, ValueError) as error:
        raise SystemExit(f"{program}: cannot read {path}: {error}") from None
    if not isinstance(document, dict) or document.get("schema") != schema:
        raise SystemExit(f"{program}: {path} is not a {schema} document")
    return document


def bench_rows(document, study="sweep"):
    """transformer_bench's rows of one study ("sweep", "warmup_study", "loss_curve"): the
    fields of each benchmark of a gpuprof.bench document, the columns of its CSV."""
    return [benchmark["fields"] for benchmark in document.get("benchmarks", [])
            if benchmark.get("fields", {}).get("study") == study]
