"""The server side of `make lab`: nobody else on the network can reach it, nobody without the token gets in,
and a port already taken is no obstacle."""
import ipaddress
import os
import socket
import subprocess
import sys
from pathlib import Path

import psutil


def non_loopback_addresses():
    """This machine's IPv4 and IPv6 addresses other than loopback and link-local ones."""
    addresses = []
    for interface in psutil.net_if_addrs().values():
        for address in interface:
            if address.family not in (socket.AF_INET, socket.AF_INET6):
                continue
            ip = ipaddress.ip_address(address.address.split("%")[0])
            if not (ip.is_loopback or ip.is_link_local):
                addresses.append(str(ip))
    return addresses


def test_lab_listens_on_loopback_only(jupyter_lab):
    listening = {connection.laddr.ip for connection in psutil.Process(jupyter_lab.process.pid).net_connections("inet")
                 if connection.status == psutil.CONN_LISTEN}
    assert listening == {"127.0.0.1"}
    for address in non_loopback_addresses():
        with socket.socket(socket.AF_INET6 if ":" in address else socket.AF_INET) as probe:
            probe.settimeout(3)
            assert probe.connect_ex((address, jupyter_lab.port)) != 0, f"JupyterLab answered on {address}"


def test_lab_refuses_requests_without_the_token(jupyter_lab):
    assert jupyter_lab.request("/api/contents", token=False)[0] == 403
    assert jupyter_lab.request("/api/contents")[0] == 200


def test_make_lab_with_its_port_taken_picks_the_next_free_one_and_prints_its_url(make_lab):
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        taken = holder.getsockname()[1]
        info, printed = make_lab(f"PORT={taken}")
    assert info["port"] != taken and f"The port {taken} is already in use" in printed
    assert f"http://127.0.0.1:{info['port']}/lab" in printed


def test_the_labs_jupyter_server_shuts_down_kernels_idle_for_an_hour(tmp_path):
    shown = subprocess.run([Path(sys.executable).with_name("jupyter"), "server", "--show-config"],
                           env={**os.environ, "JUPYTER_CONFIG_DIR": str(tmp_path)}, capture_output=True, text=True,
                           check=True).stdout
    culling = shown[shown.index("MappingKernelManager"):]
    assert ".cull_idle_timeout = 3600" in culling and ".cull_connected = True" in culling
