"""A counting, fault-injecting HTTP proxy in front of an S3 server (moto), for the remote
tests and the remote planning bench.

Every request is forwarded to the upstream server; the proxy records the method, the object
path, the Range header and the bytes of the response body it sent. Faults apply to GETs of
objects whose path contains `fault_match`: `fail_503` answers 503 without forwarding,
`drop_mid_body` sends the headers and half of the body, then closes the connection,
`fail_403` answers 403 AccessDenied (refused credentials) without forwarding.
"""
import http.client
import http.server
import socketserver
import threading


class Proxy:
    def __init__(self, upstream_port):
        self.upstream_port = upstream_port
        self.lock = threading.Lock()
        self.log = []
        self.fail_503 = 0
        self.drop_mid_body = 0
        self.fail_403 = 0
        self.fault_match = ""
        self.faults_done = 0
        proxy = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def _forward(self):
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else None
                path = self.path.split("?", 1)[0]
                fault = None
                if self.command == "GET" and proxy.fault_match and proxy.fault_match in path:
                    with proxy.lock:
                        if proxy.fail_503 > 0:
                            proxy.fail_503 -= 1
                            fault = "503"
                        elif proxy.drop_mid_body > 0:
                            proxy.drop_mid_body -= 1
                            fault = "drop"
                        elif proxy.fail_403 > 0:
                            proxy.fail_403 -= 1
                            fault = "403"
                        if fault:
                            proxy.faults_done += 1
                if fault in ("503", "403"):
                    code, name = (503, b"SlowDown") if fault == "503" else (403, b"AccessDenied")
                    msg = b"<Error><Code>" + name + b"</Code><Message>injected</Message></Error>"
                    self.send_response(code)
                    self.send_header("Content-Type", "application/xml")
                    self.send_header("Content-Length", str(len(msg)))
                    self.end_headers()
                    self.wfile.write(msg)
                    with proxy.lock:
                        proxy.log.append((self.command, path, self.headers.get("Range"), code, 0))
                    return
                conn = http.client.HTTPConnection("127.0.0.1", proxy.upstream_port, timeout=30)
                headers = {k: v for k, v in self.headers.items() if k.lower() != "connection"}
                conn.request(self.command, self.path, body=body, headers=headers)
                resp = conn.getresponse()
                data = resp.read()
                conn.close()
                self.send_response(resp.status)
                head = self.command == "HEAD"
                for k, v in resp.getheaders():
                    if k.lower() in ("connection", "transfer-encoding"):
                        continue
                    if k.lower() == "content-length" and not head:
                        continue
                    self.send_header(k, v)
                if not head:
                    self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                if fault == "drop" and len(data) > 1:
                    sent = data[: len(data) // 2]
                    self.wfile.write(sent)
                    self.wfile.flush()
                    self.close_connection = True
                    try:
                        self.connection.shutdown(2)
                    except OSError:
                        pass
                    with proxy.lock:
                        proxy.log.append((self.command, path, self.headers.get("Range"), -1, len(sent)))
                    return
                if self.command != "HEAD":
                    self.wfile.write(data)
                with proxy.lock:
                    proxy.log.append((self.command, path, self.headers.get("Range"), resp.status, len(data) if self.command != "HEAD" else 0))

            do_GET = do_PUT = do_POST = do_HEAD = do_DELETE = _forward

        class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
            daemon_threads = True
            allow_reuse_address = True

        self.server = Server(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def reset(self):
        with self.lock:
            self.log = []
            self.fail_503 = 0
            self.drop_mid_body = 0
            self.fail_403 = 0
            self.fault_match = ""
            self.faults_done = 0

    def entries(self):
        with self.lock:
            return list(self.log)

    def stop(self):
        self.server.shutdown()
        self.server.server_close()
