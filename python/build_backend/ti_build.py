"""A PEP 517 build backend for the kit that needs nothing beyond the standard library.

`pip install --no-build-isolation ./python` must work where pip has no `wheel` package (Debian's
python3-pip, for one): setuptools before 70.1 needs `wheel` to build one. A wheel of pure Python
files is a zip with a .dist-info folder (METADATA, WHEEL, RECORD), so this backend writes it
itself from pyproject.toml's [project] table. Python 3.11+ (tomllib) to build; the kit itself
also runs from PYTHONPATH.
"""
import base64
import csv
import hashlib
import io
import os
import tarfile
import tomllib
import zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGE = "trace_inspector"


def _project():
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
        return tomllib.load(f)["project"]


def _dist_name(project):
    return project["name"].replace("-", "_")


def _metadata(project):
    lines = ["Metadata-Version: 2.1", f"Name: {project['name']}", f"Version: {project['version']}",
             f"Summary: {project.get('description', '')}"]
    if "requires-python" in project:
        lines.append(f"Requires-Python: {project['requires-python']}")
    if "license" in project and "text" in project["license"]:
        lines.append(f"License: {project['license']['text']}")
    for requirement in project.get("dependencies", []):
        lines.append(f"Requires-Dist: {requirement}")
    for extra, requirements in project.get("optional-dependencies", {}).items():
        lines.append(f"Provides-Extra: {extra}")
        for requirement in requirements:
            lines.append(f'Requires-Dist: {requirement}; extra == "{extra}"')
    return "\n".join(lines) + "\n"


def _sources():
    folder = os.path.join(ROOT, PACKAGE)
    for name in sorted(os.listdir(folder)):
        if name.endswith(".py"):
            yield f"{PACKAGE}/{name}", os.path.join(folder, name)


def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def _dist_info(project):
    return f"{_dist_name(project)}-{project['version']}.dist-info"


def _dist_info_files(project):
    wheel = "Wheel-Version: 1.0\nGenerator: trace_inspector ti_build\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    return {"METADATA": _metadata(project), "WHEEL": wheel, "top_level.txt": PACKAGE + "\n"}


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    project = _project()
    folder = os.path.join(metadata_directory, _dist_info(project))
    os.makedirs(folder, exist_ok=True)
    for name, text in _dist_info_files(project).items():
        with open(os.path.join(folder, name), "w", encoding="utf-8") as f:
            f.write(text)
    return _dist_info(project)


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    project = _project()
    name = f"{_dist_name(project)}-{project['version']}-py3-none-any.whl"
    dist_info = _dist_info(project)
    records = []

    def add(archive, arcname, data):
        archive.writestr(zipfile.ZipInfo(arcname, date_time=(1980, 1, 1, 0, 0, 0)), data, zipfile.ZIP_DEFLATED)
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        records.append((arcname, f"sha256={digest}", str(len(data))))

    with zipfile.ZipFile(os.path.join(wheel_directory, name), "w") as archive:
        for arcname, path in _sources():
            with open(path, "rb") as f:
                add(archive, arcname, f.read())
        for file_name, text in _dist_info_files(project).items():
            add(archive, f"{dist_info}/{file_name}", text.encode())
        record = io.StringIO()
        writer = csv.writer(record, lineterminator="\n")
        writer.writerows(records)
        writer.writerow((f"{dist_info}/RECORD", "", ""))
        archive.writestr(zipfile.ZipInfo(f"{dist_info}/RECORD", date_time=(1980, 1, 1, 0, 0, 0)), record.getvalue())
    return name


def build_sdist(sdist_directory, config_settings=None):
    project = _project()
    base = f"{_dist_name(project)}-{project['version']}"
    name = f"{base}.tar.gz"
    with tarfile.open(os.path.join(sdist_directory, name), "w:gz") as archive:
        archive.add(os.path.join(ROOT, "pyproject.toml"), f"{base}/pyproject.toml")
        archive.add(os.path.join(ROOT, "build_backend", "ti_build.py"), f"{base}/build_backend/ti_build.py")
        for arcname, path in _sources():
            archive.add(path, f"{base}/{arcname}")
        info = tarfile.TarInfo(f"{base}/PKG-INFO")
        data = _metadata(project).encode()
        info.size = len(data)
        archive.addfile(info, io.BytesIO(data))
    return name
