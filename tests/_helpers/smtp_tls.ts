/**
 * The certificate the test SMTP listeners serve: one self-signed certificate
 * for `inbox.localhost`, `localhost` and `127.0.0.1` per test process, made
 * by the service's own generator (src/smtp/tls.ts) on first use, since an
 * RSA key takes a moment to make. Tests that check the certificate trust it
 * by its `cert` (`tls: { ca }`).
 */
import { selfSignedCertificate, type TlsMaterial } from "../../src/smtp/tls.ts";

let made: Promise<TlsMaterial> | undefined;

/** The test processes' SMTP certificate and key. */
export function testSmtpTls(): Promise<TlsMaterial> {
  return made ??= selfSignedCertificate("inbox.localhost");
}
