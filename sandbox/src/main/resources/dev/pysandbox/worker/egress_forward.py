"""pysandbox's egress forwarder: the sandbox end of the way out.

Runs inside a sandbox whose only network is loopback, as
``python3 -I -S egress_forward.py <listen_port> <unix_socket_path>``. It listens on
127.0.0.1:<listen_port> and pipes each TCP connection to the Unix socket bound into the
sandbox, behind which the server's egress proxy applies the sandbox's network policy. The
sandboxed code gets HTTP_PROXY/HTTPS_PROXY=http://127.0.0.1:<listen_port>.

Prints ``ready`` once listening and nothing else; runs until killed (the sandbox's end kills
it). Standard library only, Python 3.9+.
"""

import socket
import sys
import threading

MAX_CONNECTIONS = 64
BUFFER = 64 * 1024


def _close(sock):
    try:
        sock.close()
    except OSError:
        pass


def _pipe(src, dst, failed):
    """Copies src to dst until src ends; passes the end on as a half-close."""
    try:
        while True:
            data = src.recv(BUFFER)
            if not data:
                break
            dst.sendall(data)
        dst.shutdown(socket.SHUT_WR)
    except OSError:
        # One side broke: end both directions, so the other copy stops too.
        failed.set()
        for sock in (src, dst):
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


def _serve(client, socket_path, slots):
    upstream = None
    try:
        upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        upstream.connect(socket_path)
        failed = threading.Event()
        back = threading.Thread(target=_pipe, args=(upstream, client, failed), daemon=True)
        back.start()
        _pipe(client, upstream, failed)
        back.join()
    except OSError:
        pass
    finally:
        if upstream is not None:
            _close(upstream)
        _close(client)
        slots.release()


def main(argv):
    if len(argv) != 3:
        sys.stderr.write("usage: egress_forward.py <listen_port> <unix_socket_path>\n")
        return 2
    port = int(argv[1])
    socket_path = argv[2]
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", port))
    listener.listen(128)
    sys.stdout.write("ready\n")
    sys.stdout.flush()
    slots = threading.BoundedSemaphore(MAX_CONNECTIONS)
    while True:
        try:
            client, _ = listener.accept()
        except OSError:
            continue
        if not slots.acquire(blocking=False):
            # Over the limit: refuse at once rather than queue behind connections that may
            # never end.
            _close(client)
            continue
        try:
            client.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            threading.Thread(target=_serve, args=(client, socket_path, slots), daemon=True).start()
        except (OSError, RuntimeError):
            _close(client)
            slots.release()


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv))
    except KeyboardInterrupt:
        pass
