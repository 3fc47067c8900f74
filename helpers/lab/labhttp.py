"""Requests to the lab server's own endpoints over one kept-alive connection per thread and server: a control call
(a knob, the meter, a move of the explorer) then costs one request, not a new connection and a new server thread."""
import http.client
import threading
from urllib.parse import urlsplit

KEPT = threading.local()
CLOSED_BY_THE_SERVER = (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError, ConnectionAbortedError)


def request(url, method="GET", body=None, headers=None, timeout=5):
    """(status, body) of one HTTP request; OSError or http.client.HTTPException when no answer came."""
    parts = urlsplit(url)
    path = parts.path + (f"?{parts.query}" if parts.query else "") or "/"
    kept = getattr(KEPT, "connections", None)
    if kept is None:
        kept = KEPT.connections = {}
    connection = kept.pop(parts.netloc, None)
    if connection is not None:
        try:
            return answered(kept, parts.netloc, connection, method, path, body, headers, timeout)
        except CLOSED_BY_THE_SERVER:  # it had closed the kept connection before reading the request: open a new one
            pass
    kind = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
    connection = kind(parts.hostname, parts.port, timeout=timeout)
    return answered(kept, parts.netloc, connection, method, path, body, headers, timeout)


def answered(kept, netloc, connection, method, path, body, headers, timeout):
    """Send on `connection`, read the whole answer, and keep the connection for the next request if it stays open."""
    try:
        if connection.sock is not None:
            connection.sock.settimeout(timeout)
        connection.request(method, path, body=body, headers=headers or {})
        response = connection.getresponse()
        data = response.read()
    except BaseException:
        connection.close()
        raise
    if response.will_close:
        connection.close()
    else:
        kept[netloc] = connection
    return response.status, data
