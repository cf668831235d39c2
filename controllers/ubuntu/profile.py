"""The home every desktop episode starts with: the user's folders and the real apps' settings.

OSWorld's VM is an Ubuntu desktop whose apps have run once: no first-run wizard, tip of the day,
update check or document-recovery prompt stands between a task's setup and the agent, files open
in the app a user expects, and the home has its ``~/Desktop``, ``~/Documents``, ``~/Downloads``
... folders. :func:`lay_down_profile` writes that home, after the reset emptied it and before the
episode's first process starts, through :class:`~.homefs.HomeFiles` (no link is followed; every
file and folder is given to the sandbox's uid). It is a few small files (well under a millisecond
of writes each): the apps create everything else at their first start.

What each file sets:

- ``.config/user-dirs.dirs``: the XDG user folders (the ones :data:`HOME_FOLDERS` creates).
- ``.config/mimeapps.list`` and ``.local/share/applications/chromium.desktop``: which app opens
  what (``xdg-open``, the file manager): spreadsheets in Calc, documents in Writer, slides in
  Impress, images in GIMP, audio and video in VLC, text in gedit, folders in PCManFM, web pages
  and ``http(s)`` links in Chromium (started as :data:`~.apps.CHROMIUM_ARGV`).
- LibreOffice's ``registrymodifications.xcu``: first run done, no tip of the day, no "what's new"
  bar, autosave and recovery information off. Its extension registry as its first start leaves it
  (no bundled extension, as Debian's), so a start does not build it again: ~1 s of CPU of every
  Calc, Writer or Impress start (``benchmarks/README.md``, "Desktop density").
- GIMP's ``gimprc`` and ``sessionrc``: no update check, its single window on the screen. VLC's ``vlcrc``: no privacy/network question, no update
  check, and its web interface on the sandbox's own loopback (port 8080, password ``password``:
  OSWorld's VLC getters read the player's state there).
- Thunderbird's ``profiles.ini`` and default profile's ``user.js``: no account wizard,
  default-client check, start page, telemetry or update.
"""

from __future__ import annotations

import functools
from pathlib import Path

from hud_gym.controllers.ubuntu.apps import CHROMIUM_ARGV
from hud_gym.controllers.ubuntu.homefs import HomeFiles

__all__ = ["HOME_FOLDERS", "fresh_home_entries", "lay_down_profile", "profile_files"]

HOME_FOLDERS: tuple[str, ...] = (
    "Desktop",
    "Documents",
    "Downloads",
    "Music",
    "Pictures",
    "Public",
    "Templates",
    "Videos",
)
"""The user's folders (Ubuntu's XDG user directories), created empty in every episode's home."""

THUNDERBIRD_PROFILE = ".thunderbird/hudgym.default-release"
"""Thunderbird's default profile folder, relative to the home."""

_USER_DIRS = "".join(
    f'XDG_{key}_DIR="$HOME/{name}"\n'
    for key, name in (
        ("DESKTOP", "Desktop"),
        ("DOWNLOAD", "Downloads"),
        ("TEMPLATES", "Templates"),
        ("PUBLICSHARE", "Public"),
        ("DOCUMENTS", "Documents"),
        ("MUSIC", "Music"),
        ("PICTURES", "Pictures"),
        ("VIDEOS", "Videos"),
    )
)

_DEFAULT_APPS: dict[str, tuple[str, ...]] = {
    "libreoffice-calc.desktop": (
        "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
        "application/vnd.ms-excel",
        "application/vnd.oasis.opendocument.spreadsheet",
        "text/csv",
    ),
    "libreoffice-writer.desktop": (
        "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
        "application/msword",
        "application/vnd.oasis.opendocument.text",
        "application/rtf",
    ),
    "libreoffice-impress.desktop": (
        "application/vnd.openxmlformats-officedocument.presentationml.presentation",
        "application/vnd.ms-powerpoint",
        "application/vnd.oasis.opendocument.presentation",
    ),
    "gimp.desktop": ("image/png", "image/jpeg", "image/gif", "image/bmp", "image/tiff", "image/webp"),
    "vlc.desktop": ("video/mp4", "video/x-matroska", "video/webm", "video/x-msvideo", "audio/mpeg", "audio/x-wav"),
    "org.gnome.gedit.desktop": ("text/plain", "text/x-python", "application/json", "text/markdown"),
    "pcmanfm.desktop": ("inode/directory",),
    "chromium.desktop": ("text/html", "x-scheme-handler/http", "x-scheme-handler/https", "application/pdf"),
}

_MIMEAPPS = "[Default Applications]\n" + "".join(
    f"{mime}={desktop}\n" for desktop, mimes in _DEFAULT_APPS.items() for mime in mimes
)

_CHROMIUM_DESKTOP = f"""[Desktop Entry]
Version=1.0
Type=Application
Name=Chromium
Exec={" ".join(CHROMIUM_ARGV)} %U
Icon=chromium
Categories=Network;WebBrowser;
MimeType=text/html;x-scheme-handler/http;x-scheme-handler/https;application/pdf;
StartupWMClass=chromium
"""


def _xcu_item(path: str, prop: str, value: str) -> str:
    return f'<item oor:path="{path}"><prop oor:name="{prop}" oor:op="fuse"><value>{value}</value></prop></item>\n'


# ooSetupLastVersion above any release: no "what's new" bar (shown when the last version run is older).
_LIBREOFFICE_ITEMS = (
    ("/org.openoffice.Office.Common/Misc", "FirstRun", "false"),
    ("/org.openoffice.Office.Common/Misc", "ShowTipOfTheDay", "false"),
    ("/org.openoffice.Setup/Office", "ooSetupInstCompleted", "true"),
    ("/org.openoffice.Setup/Product", "ooSetupLastVersion", "99.9"),
    ("/org.openoffice.Office.Recovery/AutoSave", "Enabled", "false"),
    ("/org.openoffice.Office.Recovery/RecoveryInfo", "Enabled", "false"),
    ("/org.openoffice.Office.Common/Misc", "CrashReport", "false"),
    # Saving an .xlsx/.docx/.pptx keeps its format without asking (as on OSWorld's VM: its tasks save
    # with Ctrl+S before grading, and a "Keep current format?" dialog would swallow the save).
    ("/org.openoffice.Office.Common/Save/Document", "WarnAlienFormat", "false"),
)

_LIBREOFFICE_XCU = (
    '<?xml version="1.0" encoding="UTF-8"?>\n'
    '<oor:items xmlns:oor="http://openoffice.org/2001/registry" xmlns:xs="http://www.w3.org/2001/XMLSchema" '
    'xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">\n'
    + "".join(_xcu_item(*item) for item in _LIBREOFFICE_ITEMS)
    + "</oor:items>\n"
)

_GIMPRC = "(check-updates no)\n(single-window-mode yes)\n"

_GIMP_SYSTEM_SESSIONRC = Path("/etc/gimp/2.0/sessionrc")


@functools.cache
def _gimp_sessionrc() -> str | None:
    """GIMP's own default window layout (toolbox and docks), its single window maximized at the
    top left (by default openbox places it partly off the screen); ``None`` without GIMP."""
    try:
        text = _GIMP_SYSTEM_SESSIONRC.read_text(encoding="utf-8")
    except OSError:
        return None
    return text.replace("(position 200 100)", "(position 0 0)").replace('(maximized "no")', '(maximized "yes")')


_LIBREOFFICE_INSTALL = Path("/usr/lib/libreoffice")

_BACKEND_DBS = {
    "configuration": '<conf:configuration-backend-db xmlns:conf="http://openoffice.org/extensionmanager/configuration-registry/2010"/>',
    "help": '<help:help-backend-db xmlns:help="http://openoffice.org/extensionmanager/help-registry/2010"/>',
}


@functools.cache
def _libreoffice_extension_files() -> dict[str, str]:
    """LibreOffice's user extension registry as its first start writes it when the install has no
    bundled extension (home-relative path -> content); empty without LibreOffice, or when the
    install has bundled extensions (then LibreOffice registers them itself at its first start)."""
    try:
        versionrc = (_LIBREOFFICE_INSTALL / "program/versionrc").read_text(encoding="utf-8")
        bundled = list((_LIBREOFFICE_INSTALL / "share/extensions").iterdir())
    except OSError:
        return {}
    build = [line.split("=", 1)[1].strip() for line in versionrc.splitlines() if line.startswith("buildid=")]
    if bundled or not build:
        return {}
    files, user = {".config/libreoffice/4/user/extensions/buildid": build[0]}, ".config/libreoffice/4/user"
    for folder in ("extensions/bundled", "extensions/shared", "extensions/tmp", "uno_packages/cache"):
        for kind, root in _BACKEND_DBS.items():
            registry = f"{user}/{folder}/registry/com.sun.star.comp.deployment.{kind}.PackageRegistryBackend"
            files[f"{registry}/backenddb.xml"] = f'<?xml version="1.0"?>\n{root}\n'
        if folder.startswith("extensions/") and folder != "extensions/tmp":
            files[f"{user}/{folder}/lastsynchronized"] = "1"
    return files


_VLCRC = """[qt]
qt-privacy-ask=0
qt-updates-notif=0
[core]
metadata-network-access=0
extraintf=http
[lua]
http-host=localhost
http-port=8080
http-password=password
"""

_THUNDERBIRD_PROFILES = f"""[General]
StartWithLastProfile=1
Version=2

[Profile0]
Name=default-release
IsRelative=1
Path={Path(THUNDERBIRD_PROFILE).name}
Default=1
"""

_THUNDERBIRD_PREFS = {
    "mail.provider.suppress_dialog_on_startup": "true",
    "mail.shell.checkDefaultClient": "false",
    "mailnews.start_page.enabled": "false",
    "mail.rights.version": "1",
    "mail.spotlight.firstRunDone": "true",
    "app.update.auto": "false",
    "app.update.enabled": "false",
    "datareporting.policy.dataSubmissionEnabled": "false",
    "datareporting.healthreport.uploadEnabled": "false",
    "toolkit.telemetry.reportingpolicy.firstRun": "false",
    "browser.aboutConfig.showWarning": "false",
    "mail.inappnotifications.enabled": "false",
}

_THUNDERBIRD_USER_JS = "".join(f'user_pref("{key}", {value});\n' for key, value in _THUNDERBIRD_PREFS.items())


def profile_files() -> dict[str, str]:
    """The profile's files: path relative to the home -> content (see the module docstring)."""
    files = {
        ".config/user-dirs.dirs": _USER_DIRS,
        ".config/user-dirs.locale": "en_US\n",
        ".config/mimeapps.list": _MIMEAPPS,
        ".local/share/applications/chromium.desktop": _CHROMIUM_DESKTOP,
        ".config/libreoffice/4/user/registrymodifications.xcu": _LIBREOFFICE_XCU,
        ".config/GIMP/2.10/gimprc": _GIMPRC,
        ".config/vlc/vlcrc": _VLCRC,
        ".thunderbird/profiles.ini": _THUNDERBIRD_PROFILES,
        f"{THUNDERBIRD_PROFILE}/user.js": _THUNDERBIRD_USER_JS,
        **_libreoffice_extension_files(),
    }
    sessionrc = _gimp_sessionrc()
    if sessionrc is not None:
        files[".config/GIMP/2.10/sessionrc"] = sessionrc
    return files


def fresh_home_entries() -> frozenset[str]:
    """The names in a fresh episode's home (its top level): the folders and the profile's."""
    return frozenset(HOME_FOLDERS) | {relative.split("/")[0] for relative in profile_files()}


def lay_down_profile(home: HomeFiles) -> None:
    """Write the profile into ``home`` (an emptied home: nothing of the episode runs yet)."""
    for folder in HOME_FOLDERS:
        home.mkdir(home.root / folder)
    for relative, content in profile_files().items():
        home.write_bytes(home.root / relative, content.encode())
