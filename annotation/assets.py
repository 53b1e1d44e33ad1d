"""Images: read from an import's folder or zip without ever leaving its root, validated with
Pillow, stored once by content hash, with a thumbnail."""

from __future__ import annotations

import hashlib
import io
import os
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from django.conf import settings
from PIL import Image, UnidentifiedImageError

from core.errors import public_text


class ImageProblem(ValueError):
    pass


@dataclass(frozen=True)
class CheckedImage:
    sha256: str
    format: str
    width: int
    height: int
    content: bytes

    @property
    def extension(self) -> str:
        return {"JPEG": "jpg"}.get(self.format, self.format.lower())


def safe_relative(name: str) -> PurePosixPath:
    """A relative path that stays inside its root: no absolute paths, drive letters, '..' or NULs."""
    if not isinstance(name, str) or not name or "\x00" in name:
        raise ImageProblem("image path is empty or invalid")
    posix = PurePosixPath(name.replace("\\", "/"))
    if posix.is_absolute() or (posix.parts and ":" in posix.parts[0]) or ".." in posix.parts:
        raise ImageProblem(f"image path {name!r} leaves the import folder")
    return posix


class ImageSource:
    """Where an import's images come from."""

    def read(self, name: str) -> bytes:  # pragma: no cover - interface
        raise NotImplementedError


class NoImages(ImageSource):
    def read(self, name: str) -> bytes:
        raise ImageProblem(f"image {name!r} not found: no images folder or zip was given")


class FolderImages(ImageSource):
    def __init__(self, root: Path) -> None:
        self.root = Path(root).resolve()

    def read(self, name: str) -> bytes:
        rel = safe_relative(name)
        path = (self.root / rel).resolve()
        # Resolving follows symlinks: a link pointing outside the root is refused too.
        if not path.is_relative_to(self.root):
            raise ImageProblem(f"image path {name!r} leaves the import folder")
        if not path.is_file():
            raise ImageProblem(f"image {name!r} not found")
        size = path.stat().st_size
        if size > settings.HV_MAX_IMAGE_BYTES:
            raise ImageProblem(f"image {name!r} is {size} bytes; the limit is {settings.HV_MAX_IMAGE_BYTES}")
        return path.read_bytes()


class ZipImages(ImageSource):
    def __init__(self, path: Path) -> None:
        try:
            self.zip = zipfile.ZipFile(path)
        except (zipfile.BadZipFile, OSError) as exc:
            raise ImageProblem(f"the images file is not a readable zip archive ({public_text(exc)})") from None
        self.members = {}
        for info in self.zip.infolist():
            if info.is_dir():
                continue
            try:
                key = str(safe_relative(info.filename))
            except ImageProblem:
                continue  # hostile member names are never reachable
            self.members[key] = info
        # A common layout: everything inside one top folder; allow paths without it.
        tops = {k.split("/", 1)[0] for k in self.members if "/" in k}
        self.prefix = tops.pop() + "/" if len(tops) == 1 and all("/" in k for k in self.members) else ""

    def read(self, name: str) -> bytes:
        key = str(safe_relative(name))
        info = self.members.get(key) or self.members.get(self.prefix + key)
        if info is None:
            raise ImageProblem(f"image {name!r} not found in the zip")
        if info.file_size > settings.HV_MAX_IMAGE_BYTES:
            raise ImageProblem(f"image {name!r} is {info.file_size} bytes; the limit is {settings.HV_MAX_IMAGE_BYTES}")
        with self.zip.open(info) as fh:
            data = fh.read(settings.HV_MAX_IMAGE_BYTES + 1)
        if len(data) > settings.HV_MAX_IMAGE_BYTES:
            raise ImageProblem(f"image {name!r} is larger than {settings.HV_MAX_IMAGE_BYTES} bytes")
        return data


def check_image(content: bytes, name: str = "image") -> CheckedImage:
    """Validate bytes as a real image of an allowed format within the pixel limit."""
    if len(content) > settings.HV_MAX_IMAGE_BYTES:
        raise ImageProblem(f"{name}: {len(content)} bytes; the limit is {settings.HV_MAX_IMAGE_BYTES}")
    limit = settings.HV_MAX_IMAGE_PIXELS
    try:
        with Image.open(io.BytesIO(content)) as img:
            fmt = img.format or ""
            width, height = img.size
            if width * height > limit:
                raise ImageProblem(f"{name}: {width}x{height} pixels exceeds the limit of {limit}")
            if fmt not in settings.HV_ALLOWED_IMAGE_FORMATS:
                allowed = ", ".join(settings.HV_ALLOWED_IMAGE_FORMATS)
                raise ImageProblem(f"{name}: format {fmt or 'unknown'} is not allowed ({allowed})")
            img.verify()
        # verify() does not decode pixels; a full load catches truncated data.
        with Image.open(io.BytesIO(content)) as img:
            img.load()
    except ImageProblem:
        raise
    except Image.DecompressionBombError:
        raise ImageProblem(f"{name}: image is too large (decompression bomb guard)") from None
    except (UnidentifiedImageError, OSError, SyntaxError, ValueError):
        # not the decoder's exception type (issue 37): what was expected, which is what a person can act on
        raise ImageProblem(
            f"{name}: not a valid image (it does not read as {', '.join(settings.HV_ALLOWED_IMAGE_FORMATS)})"
        ) from None
    return CheckedImage(hashlib.sha256(content).hexdigest(), fmt, width, height, content)


def media_path(relative: str) -> Path:
    return Path(settings.MEDIA_ROOT) / relative


def write_atomic(path: Path, content: bytes) -> bool:
    """Write a content-addressed file once; returns True when this call created it."""
    if path.exists():
        return False
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
    with os.fdopen(fd, "wb") as fh:
        fh.write(content)
    os.replace(tmp, path)
    return True


def make_thumbnail(content: bytes) -> bytes:
    with Image.open(io.BytesIO(content)) as img:
        img = img.convert("RGBA" if img.mode in ("RGBA", "LA", "P") else "RGB")
        img.thumbnail(settings.HV_THUMBNAIL_SIZE)
        out = io.BytesIO()
        img.save(out, format="WEBP", quality=80, method=2)
        return out.getvalue()
