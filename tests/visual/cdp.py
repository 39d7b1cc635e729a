"""cdp.py - drive headless Chromium (Debian's chromium) over the DevTools
protocol, through a pipe (--remote-debugging-pipe: commands on fd 3,
replies on fd 4, each a JSON text ended by a NUL byte), so that no port
is opened and nothing but the browser is needed.

Every wait has a deadline and returns as soon as what it waits for has
happened (an event, or a condition the page reports); nothing sleeps for
a fixed time.
"""
import json
import os
import select
import shutil
import subprocess
import tempfile
import time

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
         "--disable-background-networking", "--disable-component-update",
         "--disable-sync", "--disable-quic", "--hide-scrollbars",
         "--remote-debugging-pipe"]


def find_chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    raise SystemExit("cdp: no chromium (make test-deps installs it)")


class Browser:
    """A headless Chromium with a fresh profile, and one page in it."""

    def __init__(self, deadline=60.0):
        self.deadline = deadline
        self.profile = tempfile.mkdtemp(prefix="attn-chromium-")
        cmd_r, cmd_w = os.pipe()
        res_r, res_w = os.pipe()
        # Out of the way of 3 and 4, which the child gets them as.
        hi = [os.dup(fd) for fd in (cmd_r, res_w)]
        hi = [fcntl_dup_high(fd) for fd in hi]

        def child():
            os.dup2(hi[0], 3)
            os.dup2(hi[1], 4)

        self.proc = subprocess.Popen(
            [find_chromium()] + FLAGS +
            ["--user-data-dir=" + self.profile, "about:blank"],
            preexec_fn=child, close_fds=False, stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for fd in (cmd_r, res_w, *hi):
            os.close(fd)
        self.out, self.inp = cmd_w, res_r
        self.buf = b""
        self.next_id = 0
        self.events = []
        self.session = None
        target = self.call("Target.createTarget", {"url": "about:blank"})
        attached = self.call("Target.attachToTarget",
                             {"targetId": target["targetId"],
                              "flatten": True})
        self.session = attached["sessionId"]
        for domain in ("Page", "Runtime", "Log", "Network"):
            self.call(domain + ".enable")

    def close(self):
        try:
            self.call("Browser.close", session=False)
        except Exception:
            pass
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        os.close(self.out)
        os.close(self.inp)
        shutil.rmtree(self.profile, ignore_errors=True)

    def _read(self, until):
        """Read messages until one satisfies until(msg); keep the events."""
        end = time.monotonic() + self.deadline
        while True:
            while b"\0" in self.buf:
                raw, self.buf = self.buf.split(b"\0", 1)
                msg = json.loads(raw)
                if "method" in msg:
                    self.events.append(msg)
                if until(msg):
                    return msg
            left = end - time.monotonic()
            if left <= 0:
                raise TimeoutError("cdp: no answer from Chromium")
            ready, _, _ = select.select([self.inp], [], [], left)
            if ready:
                chunk = os.read(self.inp, 1 << 20)
                if not chunk:
                    raise EOFError("cdp: Chromium exited")
                self.buf += chunk

    def call(self, method, params=None, session=True):
        self.next_id += 1
        msg = {"id": self.next_id, "method": method, "params": params or {}}
        if session and self.session:
            msg["sessionId"] = self.session
        data = json.dumps(msg).encode() + b"\0"
        while data:
            data = data[os.write(self.out, data):]
        want = self.next_id
        reply = self._read(lambda m: m.get("id") == want)
        if "error" in reply:
            raise RuntimeError("cdp: %s: %s" % (method, reply["error"]))
        return reply.get("result", {})

    def wait_event(self, method):
        for i, ev in enumerate(self.events):
            if ev["method"] == method:
                return self.events.pop(i)
        return self._read(lambda m: m.get("method") == method)

    def js(self, expr):
        """The value of a JavaScript expression in the page."""
        r = self.call("Runtime.evaluate", {"expression": expr,
                                           "returnByValue": True,
                                           "awaitPromise": True})
        if "exceptionDetails" in r:
            raise RuntimeError("cdp: %s: %s" % (expr, r["exceptionDetails"]))
        return r["result"].get("value")

    def until(self, expr):
        """Wait until a JavaScript expression is true (polled, with the
        deadline); its value."""
        end = time.monotonic() + self.deadline
        while True:
            value = self.js(expr)
            if value or time.monotonic() > end:
                return value
            # let the page's event loop run a frame before asking again
            self.js("new Promise(r => requestAnimationFrame(() => r(1)))")

    def viewport(self, width, height, mobile=False):
        self.call("Emulation.setDeviceMetricsOverride",
                  {"width": width, "height": height, "deviceScaleFactor": 1,
                   "mobile": mobile})

    def load(self, url):
        self.events = [e for e in self.events
                       if e["method"] != "Page.loadEventFired"]
        self.call("Page.navigate", {"url": url})
        self.wait_event("Page.loadEventFired")

    def screenshot(self, path):
        import base64
        r = self.call("Page.captureScreenshot", {"format": "png"})
        with open(path, "wb") as f:
            f.write(base64.b64decode(r["data"]))

    def errors(self):
        """Console errors, uncaught exceptions and failed loads so far."""
        out = []
        for ev in self.events:
            m, p = ev["method"], ev.get("params", {})
            if m == "Runtime.exceptionThrown":
                out.append("exception: %s" %
                           p["exceptionDetails"].get("text"))
            elif m == "Runtime.consoleAPICalled" and p["type"] in (
                    "error", "assert", "warning"):
                out.append("console.%s: %s" % (p["type"], [
                    a.get("value", a.get("description"))
                    for a in p["args"]]))
            elif m == "Log.entryAdded" and p["entry"]["level"] in (
                    "error", "warning"):
                out.append("log: %s" % p["entry"]["text"])
            elif m == "Network.loadingFailed":
                out.append("failed load: %s" % p.get("errorText"))
        return out

    def requests(self):
        """The URLs the page asked for."""
        return [ev["params"]["request"]["url"] for ev in self.events
                if ev["method"] == "Network.requestWillBeSent"]

    def mouse_over(self, x, y):
        self.call("Input.dispatchMouseEvent",
                  {"type": "mouseMoved", "x": x, "y": y})

    # key: (code, Windows key code, the text it types or None)
    KEYS = {" ": ("Space", 32, " "), "Enter": ("Enter", 13, "\r"),
            "Tab": ("Tab", 9, None), "Escape": ("Escape", 27, None),
            "ArrowLeft": ("ArrowLeft", 37, None),
            "ArrowUp": ("ArrowUp", 38, None),
            "ArrowRight": ("ArrowRight", 39, None),
            "ArrowDown": ("ArrowDown", 40, None),
            "m": ("KeyM", 77, "m"), "s": ("KeyS", 83, "s")}

    def press(self, key, shift=False):
        """Press and release a key of KEYS as a keyboard does: keys that
        type something send it (so Space and Enter activate what has
        the focus), Shift held when shift."""
        code, keycode, text = self.KEYS[key]
        event = {"key": key, "code": code, "windowsVirtualKeyCode": keycode,
                 "modifiers": 8 if shift else 0}
        down = dict(event, type="keyDown" if text else "rawKeyDown")
        if text:
            down["text"] = down["unmodifiedText"] = text
        self.call("Input.dispatchKeyEvent", down)
        self.call("Input.dispatchKeyEvent", dict(event, type="keyUp"))

    def key(self, key, code, keycode):
        for kind in ("rawKeyDown", "keyUp"):
            self.call("Input.dispatchKeyEvent",
                      {"type": kind, "key": key, "code": code,
                       "windowsVirtualKeyCode": keycode})


def fcntl_dup_high(fd):
    import fcntl
    high = fcntl.fcntl(fd, fcntl.F_DUPFD, 10)
    os.close(fd)
    return high
