"""A throw-away certificate authority for one local control plane.

Every run of the control plane gets its own CA, so nothing it trusts outlives
it and no two runs can authenticate to each other. kube-apiserver identifies
certificate users by subject: the common name is the user name and each
organisation is a group, which is how the admin (`system:masters`) and the
scheduler (`system:kube-scheduler`, bound by the bootstrap RBAC policy) get
their rights without any RBAC objects of ours.

ECDSA P-256 keys are used because they are generated in microseconds (RSA
takes tens of milliseconds each) and Go's TLS stack and the service-account
token signer (ES256) accept them.
"""

from __future__ import annotations

import datetime
import ipaddress
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

__all__ = [
    "CertificateAuthority",
    "KeyPair",
    "ServiceAccountKeys",
    "write_service_account_keys",
]

# Long enough for any test session or demo, short enough to be obviously
# temporary if a file ever escapes its run directory.
_VALIDITY = datetime.timedelta(days=7)
# Tolerates small clock differences between issuing and first use.
_BACKDATE = datetime.timedelta(minutes=5)


@dataclass(frozen=True)
class KeyPair:
    """Paths of a PEM certificate and its PEM private key."""

    cert_path: Path
    key_path: Path


def _new_key() -> ec.EllipticCurvePrivateKey:
    return ec.generate_private_key(ec.SECP256R1())


def _write_private(path: Path, data: bytes) -> None:
    # Keys are written 0600 from the start, never world-readable for a moment.
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)


def _key_pem(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )


def _subject(common_name: str, organizations: Sequence[str] = ()) -> x509.Name:
    attributes = [x509.NameAttribute(NameOID.ORGANIZATION_NAME, org) for org in organizations]
    attributes.append(x509.NameAttribute(NameOID.COMMON_NAME, common_name))
    return x509.Name(attributes)


class CertificateAuthority:
    """A CA whose certificate and key live in `directory`, issuing leaf pairs there."""

    def __init__(self, directory: Path, *, common_name: str = "berth-local-ca") -> None:
        directory.mkdir(parents=True, exist_ok=True)
        self.directory = directory
        self._key = _new_key()
        now = datetime.datetime.now(datetime.UTC)
        name = _subject(common_name)
        self._certificate = (
            x509.CertificateBuilder()
            .subject_name(name)
            .issuer_name(name)
            .public_key(self._key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - _BACKDATE)
            .not_valid_after(now + _VALIDITY)
            .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
            .add_extension(
                x509.KeyUsage(
                    digital_signature=True,
                    key_cert_sign=True,
                    crl_sign=True,
                    content_commitment=False,
                    key_encipherment=False,
                    data_encipherment=False,
                    key_agreement=False,
                    encipher_only=False,
                    decipher_only=False,
                ),
                critical=True,
            )
            .add_extension(
                x509.SubjectKeyIdentifier.from_public_key(self._key.public_key()), critical=False
            )
            .sign(self._key, hashes.SHA256())
        )
        self.pair = KeyPair(directory / "ca.crt", directory / "ca.key")
        self.pair.cert_path.write_bytes(self._certificate.public_bytes(serialization.Encoding.PEM))
        _write_private(self.pair.key_path, _key_pem(self._key))

    @property
    def cert_path(self) -> Path:
        return self.pair.cert_path

    @property
    def certificate(self) -> x509.Certificate:
        return self._certificate

    def issue_server(
        self,
        name: str,
        *,
        dns_names: Sequence[str] = ("localhost",),
        ip_addresses: Sequence[str] = ("127.0.0.1",),
    ) -> KeyPair:
        """A serving certificate valid for the given loopback names."""
        alternative_names: list[x509.GeneralName] = [x509.DNSName(dns) for dns in dns_names]
        alternative_names += [x509.IPAddress(ipaddress.ip_address(ip)) for ip in ip_addresses]
        return self._issue(
            file_stem=name,
            subject=_subject(name),
            usage=ExtendedKeyUsageOID.SERVER_AUTH,
            alternative_names=alternative_names,
        )

    def issue_client(
        self, user: str, *, groups: Sequence[str] = (), file_stem: str | None = None
    ) -> KeyPair:
        """A client certificate that kube-apiserver reads as `user` in `groups`."""
        stem = file_stem or "client-" + "".join(c if c.isalnum() else "_" for c in user)
        return self._issue(
            file_stem=stem,
            subject=_subject(user, groups),
            usage=ExtendedKeyUsageOID.CLIENT_AUTH,
            alternative_names=[],
        )

    def _issue(
        self,
        *,
        file_stem: str,
        subject: x509.Name,
        usage: x509.ObjectIdentifier,
        alternative_names: list[x509.GeneralName],
    ) -> KeyPair:
        key = _new_key()
        now = datetime.datetime.now(datetime.UTC)
        builder = (
            x509.CertificateBuilder()
            .subject_name(subject)
            .issuer_name(self._certificate.subject)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - _BACKDATE)
            .not_valid_after(now + _VALIDITY)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(
                x509.KeyUsage(
                    digital_signature=True,
                    key_encipherment=False,
                    content_commitment=False,
                    data_encipherment=False,
                    key_agreement=False,
                    key_cert_sign=False,
                    crl_sign=False,
                    encipher_only=False,
                    decipher_only=False,
                ),
                critical=True,
            )
            .add_extension(x509.ExtendedKeyUsage([usage]), critical=False)
            .add_extension(
                x509.AuthorityKeyIdentifier.from_issuer_public_key(self._key.public_key()),
                critical=False,
            )
        )
        if alternative_names:
            builder = builder.add_extension(
                x509.SubjectAlternativeName(alternative_names), critical=False
            )
        certificate = builder.sign(self._key, hashes.SHA256())
        pair = KeyPair(self.directory / f"{file_stem}.crt", self.directory / f"{file_stem}.key")
        pair.cert_path.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
        _write_private(pair.key_path, _key_pem(key))
        return pair


@dataclass(frozen=True)
class ServiceAccountKeys:
    """The key pair kube-apiserver signs (private) and verifies (public) tokens with."""

    public_key_path: Path
    private_key_path: Path


def write_service_account_keys(directory: Path) -> ServiceAccountKeys:
    """A fresh token-signing key pair; the public half is a bare PEM public key,
    which is what `--service-account-key-file` expects."""
    key = _new_key()
    pair = ServiceAccountKeys(directory / "sa.pub", directory / "sa.key")
    pair.public_key_path.write_bytes(
        key.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )
    )
    _write_private(pair.private_key_path, _key_pem(key))
    return pair
