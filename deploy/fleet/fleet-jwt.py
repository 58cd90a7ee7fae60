#!/usr/bin/env python3
"""Device tokens for ejabberd's JWT authentication (auth_method: jwt; docs/fleet.md, "JWT").

  fleet-jwt.py keys DIR                    DIR/jwt-private.pem (keep it off the nodes) and
                                           DIR/jwt-public.jwk (the nodes' jwt_key), ES256
  fleet-jwt.py token DIR DEVICE HOST DAYS  a token for DEVICE@HOST valid DAYS days, to stdout:
                                           the MQTT password of that device (its bridge's
                                           remote_password)
  fleet-jwt.py tokens DIR HOST DAYS        one DEVICE a line on stdin, DEVICE:TOKEN a line out
                                           (the key loaded once: simulated devices by the
                                           thousand, fleet-load.py's --devices)

The nodes hold only the public key: a copy of a node's files holds no device's secret. ejabberd
23.01 requires `exp`; the token is checked on every CONNECT and stops working when it expires.
Uses python3-cryptography (Debian).
"""
import base64, json, os, sys, time
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature


def b64(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def keys(directory):
    os.makedirs(directory, exist_ok=True)
    key = ec.generate_private_key(ec.SECP256R1())
    private = os.path.join(directory, "jwt-private.pem")
    with open(os.open(private, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "wb") as f:
        f.write(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))
    numbers = key.public_key().public_numbers()
    jwk = {"kty": "EC", "crv": "P-256", "x": b64(numbers.x.to_bytes(32, "big")), "y": b64(numbers.y.to_bytes(32, "big"))}
    with open(os.path.join(directory, "jwt-public.jwk"), "w") as f:
        json.dump(jwk, f)
    print(os.path.join(directory, "jwt-public.jwk"))


def load_key(directory):
    with open(os.path.join(directory, "jwt-private.pem"), "rb") as f:
        return serialization.load_pem_private_key(f.read(), None)


def signed(key, device, host, days):
    header = b64(json.dumps({"alg": "ES256", "typ": "JWT"}, separators=(",", ":")).encode())
    claims = {"jid": f"{device}@{host}", "iat": int(time.time()), "exp": int(time.time() + float(days) * 86400)}
    body = b64(json.dumps(claims, separators=(",", ":")).encode())
    r, s = decode_dss_signature(key.sign(f"{header}.{body}".encode(), ec.ECDSA(hashes.SHA256())))
    return f"{header}.{body}.{b64(r.to_bytes(32, 'big') + s.to_bytes(32, 'big'))}"


def token(directory, device, host, days):
    print(signed(load_key(directory), device, host, days))


def tokens(directory, host, days):
    key = load_key(directory)
    for line in sys.stdin:
        device = line.strip()
        if device:
            print(f"{device}:{signed(key, device, host, days)}")


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "keys":
        keys(sys.argv[2])
    elif len(sys.argv) == 6 and sys.argv[1] == "token":
        token(*sys.argv[2:])
    elif len(sys.argv) == 5 and sys.argv[1] == "tokens":
        tokens(*sys.argv[2:])
    else:
        sys.exit(__doc__)
