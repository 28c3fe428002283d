/** Generates the PKI of a throwaway control plane: a CA, a serving cert, an admin client cert, a service-account key. */
import "reflect-metadata"; // @peculiar/x509 resolves its ASN.1 schemas through tsyringe, which needs Reflect metadata.
import { webcrypto } from "node:crypto";
import * as x509 from "@peculiar/x509";

x509.cryptoProvider.set(webcrypto as unknown as Parameters<typeof x509.cryptoProvider.set>[0]);

type CryptoKey = webcrypto.CryptoKey;
type CryptoKeyPair = webcrypto.CryptoKeyPair;

/** PEM-encoded material for etcd-less TLS of kube-apiserver and its admin client. */
export interface ControlPlaneCertificates {
  /** The CA that signs both the serving and the client certificate; clients trust it. */
  readonly caCert: string;
  readonly servingCert: string;
  readonly servingKey: string;
  /** Client certificate of the admin user (group `system:masters`). */
  readonly clientCert: string;
  readonly clientKey: string;
  /** Private key that signs service-account tokens (TokenRequest). */
  readonly serviceAccountKey: string;
  /** Public half of {@link serviceAccountKey}, for verifying tokens. */
  readonly serviceAccountPublicKey: string;
}

/** What the certificates are for. */
export interface CertificateProps {
  /** DNS names and IP addresses the serving certificate is valid for. */
  readonly hosts: readonly string[];
  /** Common name of the admin client certificate. */
  readonly clientName: string;
  /** Groups (organisations) of the admin client certificate. */
  readonly clientGroups: readonly string[];
  /** Start of validity; certificates last {@link validityDays} from here. */
  readonly now: Date;
  readonly validityDays?: number;
}

const algorithm = { name: "ECDSA", namedCurve: "P-256", hash: "SHA-256" } as const;
const ipPattern = /^(\d{1,3}\.){3}\d{1,3}$|:/;

/** Creates a fresh CA and the certificates signed by it; nothing is written to disk. */
export async function generateCertificates(props: CertificateProps): Promise<ControlPlaneCertificates> {
  const notBefore = new Date(props.now.getTime() - 60_000); // tolerate small clock skew
  const notAfter = new Date(props.now.getTime() + (props.validityDays ?? 365) * 86_400_000);
  let serial = 1;
  const nextSerial = () => (serial++).toString(16).padStart(2, "0");

  const caKeys = await generateKeys();
  const ca = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: nextSerial(),
    name: "CN=openmcp-engine-ca",
    notBefore,
    notAfter,
    signingAlgorithm: algorithm,
    keys: caKeys,
    extensions: [
      new x509.BasicConstraintsExtension(true, 0, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
      await x509.SubjectKeyIdentifierExtension.create(caKeys.publicKey),
    ],
  });

  const leaf = async (subject: string, usage: string, san?: x509.SubjectAlternativeNameExtension) => {
    const keys = await generateKeys();
    const cert = await x509.X509CertificateGenerator.create({
      serialNumber: nextSerial(),
      subject,
      issuer: ca.subject,
      notBefore,
      notAfter,
      signingAlgorithm: algorithm,
      publicKey: keys.publicKey,
      signingKey: caKeys.privateKey,
      extensions: [
        new x509.BasicConstraintsExtension(false, undefined, true),
        new x509.KeyUsagesExtension(
          x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment,
          true,
        ),
        new x509.ExtendedKeyUsageExtension([usage]),
        await x509.AuthorityKeyIdentifierExtension.create(ca, false),
        ...(san ? [san] : []),
      ],
    });
    return { cert: cert.toString("pem"), key: await privateKeyPem(keys.privateKey) };
  };

  const serving = await leaf(
    "CN=kube-apiserver",
    x509.ExtendedKeyUsage.serverAuth,
    new x509.SubjectAlternativeNameExtension(
      props.hosts.map((host) =>
        ipPattern.test(host) ? { type: "ip", value: host } : { type: "dns", value: host },
      ),
    ),
  );
  const subject = [`CN=${props.clientName}`, ...props.clientGroups.map((group) => `O=${group}`)].join(", ");
  const client = await leaf(subject, x509.ExtendedKeyUsage.clientAuth);
  const serviceAccount = await generateKeys();

  return {
    caCert: ca.toString("pem"),
    servingCert: serving.cert,
    servingKey: serving.key,
    clientCert: client.cert,
    clientKey: client.key,
    serviceAccountKey: await privateKeyPem(serviceAccount.privateKey),
    serviceAccountPublicKey: await publicKeyPem(serviceAccount.publicKey),
  };
}

/**
 * The PKI of a control plane served on loopback (`127.0.0.1`, `localhost`), and on `moreHosts` if given, to an
 * admin client in `system:masters`.
 */
export function generateLoopbackCertificates(
  now = new Date(),
  moreHosts: readonly string[] = [],
): Promise<ControlPlaneCertificates> {
  return generateCertificates({
    hosts: ["127.0.0.1", "localhost", ...moreHosts],
    clientName: "openmcp-engine-admin",
    clientGroups: ["system:masters"],
    now,
  });
}

function generateKeys(): Promise<CryptoKeyPair> {
  return webcrypto.subtle.generateKey(algorithm, true, ["sign", "verify"]) as Promise<CryptoKeyPair>;
}

async function privateKeyPem(key: CryptoKey): Promise<string> {
  return pem("PRIVATE KEY", await webcrypto.subtle.exportKey("pkcs8", key));
}

async function publicKeyPem(key: CryptoKey): Promise<string> {
  return pem("PUBLIC KEY", await webcrypto.subtle.exportKey("spki", key));
}

function pem(label: string, der: ArrayBuffer): string {
  const base64 = Buffer.from(der).toString("base64");
  return `-----BEGIN ${label}-----\n${base64.replace(/.{1,64}/g, "$&\n")}-----END ${label}-----\n`;
}
