"""Package discovery for hud-gym (everything else is in ``pyproject.toml``).

The library is ``hud_gym/``; two of its subpackages live in top-level folders, ``controllers/``
(``hud_gym.controllers``) and ``wrappers/`` (``hud_gym.wrappers``). setuptools' ``packages.find``
cannot discover packages under a remapped folder, so they are found here: a new subpackage (any
folder with an ``__init__.py``) ships in the wheel without editing a list.
"""

from setuptools import find_packages, setup

MAPPED_FOLDERS = {"hud_gym.controllers": "controllers", "hud_gym.wrappers": "wrappers"}

packages = find_packages(include=["hud_gym", "hud_gym.*"])
for package, folder in MAPPED_FOLDERS.items():
    packages += [package, *(f"{package}.{sub}" for sub in find_packages(folder))]

setup(packages=packages, package_dir={"hud_gym": "hud_gym", **MAPPED_FOLDERS})
