#!/usr/bin/env python3
"""HTTP for the class tests, outside the test process: one request, or a class's load.

    client.py post URL BODY_FILE          -> {"status": 200, "body": "..."}
    client.py get URL                     -> {"status": 200, "body": "..."}
    client.py load URL TEMPLATE_FILE STUDENTS SUBMISSIONS [KILL_PID KILL_AFTER]
        STUDENTS threads at once, each posting SUBMISSIONS submissions in turn, made from the
        template with a new id each, a name and a key per student. With KILL_PID, SIGKILL
        goes to that process once KILL_AFTER submissions have been acknowledged.
        -> {"acknowledged": [ids], "failures": ["..."], "seconds": 1.5}
"""
import json, os, signal, sys, threading, time, urllib.error, urllib.request, uuid

def request(url, body=None):
    try:
        with urllib.request.urlopen(urllib.request.Request(url, data=body, method="POST" if body is not None else "GET"),
                                    timeout=30) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()

def load(url, template, students, submissions, kill_pid=None, kill_after=None):
    acknowledged, failures, lock = [], [], threading.Lock()
    killed = [False]

    def student(number):
        key = uuid.uuid4().hex
        for attempt in range(submissions):
            submission = dict(template, id=str(uuid.uuid4()), name=f"Student {number}", studentKey=key,
                              createdAt=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() + attempt)))
            try:
                status, body = request(url, json.dumps(submission).encode())
            except OSError as error:
                status, body = 0, str(error)
            with lock:
                if status == 200:
                    acknowledged.append(submission["id"])
                    if kill_pid and not killed[0] and len(acknowledged) >= kill_after:
                        os.kill(kill_pid, signal.SIGKILL)
                        killed[0] = True
                else:
                    failures.append(f"{status} {body.strip()}")

    started = time.time()
    threads = [threading.Thread(target=student, args=(number,)) for number in range(students)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return {"acknowledged": acknowledged, "failures": failures, "seconds": time.time() - started}

command = sys.argv[1]
if command == "post":
    status, body = request(sys.argv[2], open(sys.argv[3], "rb").read())
    print(json.dumps({"status": status, "body": body}))
elif command == "get":
    status, body = request(sys.argv[2])
    print(json.dumps({"status": status, "body": body}))
elif command == "load":
    template = json.load(open(sys.argv[3]))
    extra = [int(value) for value in sys.argv[6:8]]
    print(json.dumps(load(sys.argv[2], template, int(sys.argv[4]), int(sys.argv[5]), *extra)))
else:
    print(f"client.py: no command {command}", file=sys.stderr)
    sys.exit(2)
