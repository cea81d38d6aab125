#!/usr/bin/env python3
"""Drives headless Chromium through its DevTools pipe, so a test reads a page's live DOM.

    browser.py [--no-scripts] URL STEPS_FILE

STEPS_FILE is a JSON list; each step is one of
    {"eval": "JS expression"}                       its value, after awaiting a promise
    {"post": {"url": "...", "body": "..."}}         an HTTP POST from here, while the page stays open
    {"waitFor": "JS expression", "seconds": 10}     polls until the expression is truthy
    {"screenshot": "PATH"}                          a PNG of the 1280x720 viewport
Prints one JSON list with each step's result. Exits 2 with one line on stderr when the browser
cannot be driven.
"""
import base64, json, os, subprocess, sys, time, urllib.request

def main():
    arguments = sys.argv[1:]
    scripts = arguments[0] != "--no-scripts"
    if not scripts:
        arguments = arguments[1:]
    url, steps = arguments[0], json.load(open(arguments[1]))
    to_browser_r, to_browser_w = os.pipe()
    from_browser_r, from_browser_w = os.pipe()

    def plumb():
        # Chromium reads commands from descriptor 3 and answers on 4. dup2 onto itself keeps
        # close-on-exec, hence set_inheritable.
        os.dup2(to_browser_r, 3)
        os.dup2(from_browser_w, 4)
        os.set_inheritable(3, True)
        os.set_inheritable(4, True)

    browser = subprocess.Popen(
        ["chromium-headless-shell", "--headless", "--no-sandbox", "--disable-gpu", "--remote-debugging-pipe",
         "--window-size=1280,720", "--hide-scrollbars", "about:blank"],
        preexec_fn=plumb, close_fds=False, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    os.close(to_browser_r)
    os.close(from_browser_w)
    pending = b""
    next_id = [0]

    def send(method, params=None, session=None):
        nonlocal pending
        next_id[0] += 1
        message = {"id": next_id[0], "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        os.write(to_browser_w, json.dumps(message).encode() + b"\0")
        while True:
            while b"\0" not in pending:
                chunk = os.read(from_browser_r, 1 << 16)
                if not chunk:
                    raise RuntimeError("the browser closed its pipe")
                pending += chunk
            raw, pending = pending.split(b"\0", 1)
            answer = json.loads(raw)
            if answer.get("id") == next_id[0]:
                if "error" in answer:
                    raise RuntimeError(f"{method}: {answer['error'].get('message')}")
                return answer["result"]

    def evaluate(expression, session):
        result = send("Runtime.evaluate", {"expression": expression, "returnByValue": True, "awaitPromise": True}, session)
        if "exceptionDetails" in result:
            raise RuntimeError(f"the page threw: {result['exceptionDetails'].get('text')}")
        return result["result"].get("value")

    try:
        target = send("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        if not scripts:
            send("Emulation.setScriptExecutionDisabled", {"value": True}, session)
        send("Page.navigate", {"url": url}, session)
        deadline = time.time() + 15
        while not evaluate("location.href !== 'about:blank' && document.readyState === 'complete'", session):
            if time.time() > deadline:
                raise RuntimeError("the page did not load in 15 s")
            time.sleep(0.05)
        results = []
        for step in steps:
            if "eval" in step:
                results.append(evaluate(step["eval"], session))
            elif "post" in step:
                request = urllib.request.Request(step["post"]["url"], data=step["post"]["body"].encode(), method="POST")
                with urllib.request.urlopen(request, timeout=10) as response:
                    results.append(response.status)
            elif "waitFor" in step:
                started, found = time.time(), False
                while time.time() - started < step.get("seconds", 10):
                    if evaluate(step["waitFor"], session):
                        found = True
                        break
                    time.sleep(0.1)
                results.append(found)
            elif "screenshot" in step:
                shot = send("Page.captureScreenshot", {"format": "png"}, session)
                with open(step["screenshot"], "wb") as file:
                    file.write(base64.b64decode(shot["data"]))
                results.append(step["screenshot"])
        print(json.dumps(results))
    except (RuntimeError, OSError) as error:
        print(f"browser.py: {error}", file=sys.stderr)
        sys.exit(2)
    finally:
        browser.kill()
        browser.wait()

main()
