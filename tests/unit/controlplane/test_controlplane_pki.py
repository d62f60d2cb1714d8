"""The throw-away CA issues what kube-apiserver expects of each identity."""

from __future__ import annotations

import ipaddress
import stat
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from berth.controlplane.pki import CertificateAuthority, write_service_account_keys


def load(path: Path) -> x509.Certificate:
    return x509.load_pem_x509_certificate(path.read_bytes())


def test_client_certificate_names_user_and_groups_as_apiserver_reads_them(tmp_path: Path) -> None:
    ca = CertificateAuthority(tmp_path)
    pair = ca.issue_client("admin", groups=("system:masters", "team-a"))
    certificate = load(pair.cert_path)

    common_names = certificate.subject.get_attributes_for_oid(NameOID.COMMON_NAME)
    organizations = certificate.subject.get_attributes_for_oid(NameOID.ORGANIZATION_NAME)
    assert [a.value for a in common_names] == ["admin"]
    assert [a.value for a in organizations] == ["system:masters", "team-a"]
    usage = certificate.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value
    assert list(usage) == [ExtendedKeyUsageOID.CLIENT_AUTH]
    certificate.verify_directly_issued_by(ca.certificate)


def test_server_certificate_covers_loopback_names(tmp_path: Path) -> None:
    ca = CertificateAuthority(tmp_path)
    certificate = load(ca.issue_server("kube-apiserver").cert_path)

    names = certificate.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert names.get_values_for_type(x509.DNSName) == ["localhost"]
    assert names.get_values_for_type(x509.IPAddress) == [ipaddress.ip_address("127.0.0.1")]
    certificate.verify_directly_issued_by(ca.certificate)


def test_private_keys_are_never_readable_by_others(tmp_path: Path) -> None:
    ca = CertificateAuthority(tmp_path)
    client = ca.issue_client("someone")
    service_accounts = write_service_account_keys(tmp_path)

    for key_path in (ca.pair.key_path, client.key_path, service_accounts.private_key_path):
        assert stat.S_IMODE(key_path.stat().st_mode) == 0o600


def test_service_account_public_key_matches_its_private_key(tmp_path: Path) -> None:
    keys = write_service_account_keys(tmp_path)
    private = serialization.load_pem_private_key(keys.private_key_path.read_bytes(), None)
    public = serialization.load_pem_public_key(keys.public_key_path.read_bytes())
    pem, spki = serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    assert private.public_key().public_bytes(pem, spki) == public.public_bytes(pem, spki)
