#!/usr/bin/env python3
"""Opens a `nandlab report` HTML file in a real headless browser and checks that it renders.

Usage: scripts/check_report.py REPORT.html [--screenshot PAGE.png] [--scale S]
                               [--chromium PATH] [--timeout SECONDS]

Debian's chromium runs headless (``--headless=new --no-sandbox --disable-gpu``) with every host
name resolving to nothing (``--host-resolver-rules="MAP * ~NOTFOUND"``), so a page that needed
the network would fail here. The script drives it over the DevTools protocol on a pipe
(``--remote-debugging-pipe``: no port, no extra packages), loads the file, and checks that

* every ``<img>`` and ``<svg>`` of the file is in the DOM and every image decoded (loaded with a
  non-zero natural size), and the page shows at least one figure;
* the console got no errors: no uncaught exception, no ``console.error``, no failed load or
  blocked request (the report's Content-Security-Policy logs any external reference);
* a screenshot of the whole page (beyond the viewport) is not blank: not one colour, and a
  reasonable fraction of pixels not white.

It writes the screenshot (``--screenshot``, by default REPORT.png beside the report), prints a
one-line summary and exits 0 when every check passes, 1 when one fails (2 for bad arguments or
no browser).
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import fcntl
import io
import json
import os
import pathlib
import re
import select
import shutil
import subprocess
import sys
import tempfile
import time
from typing import Any, Optional

MIN_INK = 0.005  # fraction of non-white pixels a page with figures has at least


class Browser:
    """A headless chromium driven over ``--remote-debugging-pipe`` (fd 3: commands in, fd 4:
    replies and events out, each a JSON message ending with a NUL byte)."""

    def __init__(self, chromium: str, profile: str, timeout: float) -> None:
        self.timeout = timeout
        to_child_r, self._to_child = os.pipe()
        self._from_child, from_child_w = os.pipe()
        # The child's ends, moved above 4 so that placing them at 3 and 4 cannot clobber one.
        high = [fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10) for fd in (to_child_r, from_child_w)]
        for fd in (to_child_r, from_child_w):
            os.close(fd)
        to_child_r, from_child_w = high

        def child_fds() -> None:
            os.dup2(to_child_r, 3)  # dup2 leaves the copies inheritable
            os.dup2(from_child_w, 4)

        self.process = subprocess.Popen(
            [
                chromium,
                "--headless=new",
                "--no-sandbox",
                "--disable-gpu",
                "--host-resolver-rules=MAP * ~NOTFOUND",
                "--remote-debugging-pipe",
                f"--user-data-dir={profile}",
                "--no-first-run",
                "--no-default-browser-check",
                "--disable-extensions",
                "--disable-background-networking",
                "--disable-component-update",
                "--hide-scrollbars",
                "--window-size=1280,900",
                "about:blank",
            ],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            close_fds=False,  # keeps 3 and 4; Python's own descriptors are close-on-exec
            preexec_fn=child_fds,
        )
        os.close(to_child_r)
        os.close(from_child_w)
        self._buffer = b""
        self._next_id = 0
        self.events: list[dict[str, Any]] = []

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.send("Browser.close", wait=False)
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        for fd in (self._to_child, self._from_child):
            with contextlib.suppress(OSError):
                os.close(fd)

    def _read_message(self, deadline: float) -> dict[str, Any]:
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("the browser did not answer in time")
            ready, _, _ = select.select([self._from_child], [], [], left)
            if not ready:
                continue
            chunk = os.read(self._from_child, 1 << 20)
            if not chunk:
                raise ConnectionError("the browser exited")
            self._buffer += chunk
        message, self._buffer = self._buffer.split(b"\0", 1)
        decoded: dict[str, Any] = json.loads(message)
        return decoded

    def send(
        self,
        method: str,
        params: Optional[dict[str, Any]] = None,
        session: Optional[str] = None,
        wait: bool = True,
    ) -> dict[str, Any]:
        """Sends a command and returns its result (events that arrive meanwhile are kept)."""
        self._next_id += 1
        message: dict[str, Any] = {"id": self._next_id, "method": method, "params": params or {}}
        if session is not None:
            message["sessionId"] = session
        os.write(self._to_child, json.dumps(message).encode() + b"\0")
        if not wait:
            return {}
        deadline = time.monotonic() + self.timeout
        while True:
            reply = self._read_message(deadline)
            if reply.get("id") == self._next_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error'].get('message')}")
                result: dict[str, Any] = reply.get("result", {})
                return result
            if "method" in reply:
                self.events.append(reply)

    def wait_for(self, method: str) -> dict[str, Any]:
        """Waits for an event (or returns one already received)."""
        for event in self.events:
            if event.get("method") == method:
                return event
        deadline = time.monotonic() + self.timeout
        while True:
            message = self._read_message(deadline)
            if "method" in message:
                self.events.append(message)
                if message["method"] == method:
                    return message


def console_errors(events: list[dict[str, Any]]) -> list[str]:
    """Uncaught exceptions, console errors, failed loads and browser log errors."""
    errors = []
    for event in events:
        method, params = event.get("method"), event.get("params", {})
        if method == "Runtime.exceptionThrown":
            details = params.get("exceptionDetails", {})
            text = details.get("exception", {}).get("description") or details.get("text")
            errors.append(f"Uncaught {text}")
        elif method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
            args = params.get("args", [])
            errors.append("console.error: " + " ".join(str(a.get("value", a.get("description")))
                                                        for a in args))
        elif method == "Log.entryAdded" and params.get("entry", {}).get("level") == "error":
            entry = params["entry"]
            errors.append(f"{entry.get('source')}: {entry.get('text')} {entry.get('url', '')}")
        elif method == "Network.loadingFailed" and not params.get("canceled"):
            errors.append(f"failed load: {params.get('errorText')}")
    return errors


PAGE_FACTS = """(() => {
  const imgs = Array.from(document.images);
  return JSON.stringify({
    images: imgs.length,
    decoded: imgs.filter(i => i.complete && i.naturalWidth > 0).length,
    external: imgs.filter(i => !i.src.startsWith('data:')).length,
    svgs: document.querySelectorAll('svg').length,
    figures: document.querySelectorAll('figure').length,
    width: Math.ceil(document.documentElement.scrollWidth),
    height: Math.ceil(document.documentElement.scrollHeight),
    title: document.title,
  });
})()"""


def ink(png: bytes) -> tuple[int, float, int, int]:
    """Distinct colours (capped) and the fraction of pixels that are not white."""
    try:
        from PIL import Image

        image = Image.open(io.BytesIO(png)).convert("RGB")
        width, height = image.size
        small = image.resize((max(1, width // 2), max(1, height // 2)))
        colours = small.getcolors(maxcolors=1 << 16)
        distinct = len(colours) if colours is not None else 1 << 16
        grey = small.convert("L")
        histogram = grey.histogram()
        total = sum(histogram)
        white = sum(histogram[250:])
        return distinct, (total - white) / total if total else 0.0, width, height
    except ImportError:  # matplotlib reads PNGs too
        import matplotlib.image
        import numpy

        pixels = matplotlib.image.imread(io.BytesIO(png), format="png")[..., :3]
        flat = pixels.reshape(-1, 3)
        distinct = len(numpy.unique(flat[:: max(1, len(flat) // 200_000)], axis=0))
        non_white = float((pixels.min(axis=2) < 250 / 255).mean())
        return distinct, non_white, pixels.shape[1], pixels.shape[0]


def check(
    report: pathlib.Path, screenshot: pathlib.Path, chromium: str, timeout: float, scale: float
) -> tuple[bool, str]:
    text = report.read_text(encoding="utf-8", errors="replace")
    expected_images = len(re.findall(r"<img\b", text))
    expected_svgs = len(re.findall(r"<svg\b", text))
    problems: list[str] = []
    external = re.findall(r"(?:https?:)?//[A-Za-z0-9.-]+\.[A-Za-z]{2,}[^\s\"'<>)]*", text)
    if external:
        problems.append(f"external references in the file: {external[:3]}")
    with tempfile.TemporaryDirectory(prefix="check_report.") as profile:
        browser = Browser(chromium, profile, timeout)
        try:
            targets = browser.send("Target.getTargets")["targetInfos"]
            page = next(t for t in targets if t.get("type") == "page")
            session = browser.send(
                "Target.attachToTarget", {"targetId": page["targetId"], "flatten": True}
            )["sessionId"]
            for domain in ("Page", "Runtime", "Log", "Network"):
                browser.send(f"{domain}.enable", session=session)
            browser.send("Page.navigate", {"url": report.resolve().as_uri()}, session=session)
            browser.wait_for("Page.loadEventFired")
            evaluated = browser.send(
                "Runtime.evaluate",
                {"expression": PAGE_FACTS, "returnByValue": True},
                session=session,
            )
            facts = json.loads(evaluated["result"]["value"])
            width, height = max(1, facts["width"]), max(1, facts["height"])
            shot = browser.send(
                "Page.captureScreenshot",
                {
                    "format": "png",
                    "captureBeyondViewport": True,
                    "clip": {"x": 0, "y": 0, "width": width, "height": height, "scale": scale},
                },
                session=session,
            )
            # Events that arrived while the page settled.
            browser.send("Runtime.evaluate", {"expression": "1"}, session=session)
        finally:
            browser.close()
    png = base64.b64decode(shot["data"])
    screenshot.parent.mkdir(parents=True, exist_ok=True)
    screenshot.write_bytes(png)
    errors = console_errors(browser.events)
    if errors:
        problems.append(f"{len(errors)} console errors, e.g. {errors[0]!r}")
    if facts["images"] != expected_images or facts["svgs"] != expected_svgs:
        problems.append(
            f"the DOM has {facts['images']} <img> and {facts['svgs']} <svg>, the file "
            f"{expected_images} and {expected_svgs}"
        )
    if facts["decoded"] != facts["images"]:
        problems.append(f"{facts['images'] - facts['decoded']} of {facts['images']} images "
                        "did not load")
    if facts["external"]:
        problems.append(f"{facts['external']} images are not data: URIs")
    if facts["images"] + facts["svgs"] == 0:
        problems.append("no figures")
    colours, inked, shot_w, shot_h = ink(png)
    if colours <= 1:
        problems.append("the screenshot is one colour (blank page)")
    elif inked < MIN_INK:
        problems.append(f"the screenshot is {inked:.2%} non-white (blank page?)")
    summary = (
        f"{report.name}: {facts['images']} images ({facts['decoded']} decoded), "
        f"{facts['svgs']} svg, {len(errors)} console errors, page {width}x{height} px, "
        f"screenshot {screenshot} {shot_w}x{shot_h} px {inked:.1%} non-white"
    )
    if problems:
        return False, f"FAIL {summary}: " + "; ".join(problems)
    return True, f"OK {summary}"


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="check_report.py", description=__doc__.split("\n")[0])
    parser.add_argument("report", type=pathlib.Path)
    parser.add_argument("--screenshot", type=pathlib.Path,
                        help="where to write the full-page PNG (default: REPORT.png)")
    parser.add_argument("--scale", type=float, default=1.0,
                        help="screenshot scale (0.5 halves width and height)")
    parser.add_argument("--chromium", default=os.environ.get("CHROMIUM", "/usr/bin/chromium"))
    parser.add_argument("--timeout", type=float, default=60.0,
                        help="seconds to wait for each browser step")
    args = parser.parse_args(argv)
    if not args.report.is_file():
        print(f"check_report: error: {args.report}: no such file", file=sys.stderr)
        return 2
    chromium = shutil.which(args.chromium) or (args.chromium if os.access(args.chromium, os.X_OK)
                                               else None)
    if chromium is None:
        print(f"check_report: error: no browser at {args.chromium} (install chromium or pass "
              "--chromium)", file=sys.stderr)
        return 2
    screenshot = args.screenshot or args.report.with_suffix(".png")
    try:
        ok, line = check(args.report, screenshot, chromium, args.timeout, args.scale)
    except (OSError, TimeoutError, ConnectionError, RuntimeError, KeyError,
            StopIteration) as e:
        print(f"check_report: FAIL {args.report.name}: the browser check broke: "
              f"{type(e).__name__}: {e}")
        return 1
    print(f"check_report: {line}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
