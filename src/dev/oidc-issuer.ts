/**
 * A small OIDC issuer on loopback for tests and the demo: HTTPS with its own CA, a discovery document and a JWKS,
 * and ID tokens (RS256) signed with a key only the test holds.
 */
import { webcrypto } from "node:crypto";
import { createServer, type Server } from "node:https";
import type { AddressInfo } from "node:net";
import { generateCertificates } from "../controlplane/certificates.ts";

/** A running issuer. */
export interface OidcIssuer {
  /** `https://<host>:<port>`, the `iss` of its tokens. */
  readonly url: string;
  /** PEM of the CA that signed its serving certificate (what the cluster must trust). */
  readonly certificateAuthority: string;
  /** An ID token for `audience` naming `subject` and `groups`, valid for `ttlSeconds`. */
  token(claims: {
    audience: string;
    subject: string;
    groups?: readonly string[];
    ttlSeconds?: number;
  }): Promise<string>;
  stop(): Promise<void>;
}

const base64url = (data: ArrayBuffer | Uint8Array | string) =>
  Buffer.from(
    typeof data === "string" ? data : data instanceof Uint8Array ? data : new Uint8Array(data),
  ).toString("base64url");

/** Where the issuer listens. */
export interface OidcIssuerOptions {
  /**
   * The address to listen on and to name in its URL and serving certificate; default `127.0.0.1`. A
   * cluster in a container (kind) reaches the host at its Docker network's gateway, not at loopback.
   */
  readonly host?: string;
}

/** Starts an issuer on a free port of `options.host` (loopback by default). */
export async function startOidcIssuer(options: OidcIssuerOptions = {}): Promise<OidcIssuer> {
  const host = options.host ?? "127.0.0.1";
  const certificates = await generateCertificates({
    hosts: [host],
    clientName: "unused",
    clientGroups: [],
    now: new Date(),
  });
  const algorithm = {
    name: "RSASSA-PKCS1-v1_5",
    modulusLength: 2048,
    publicExponent: new Uint8Array([1, 0, 1]),
    hash: "SHA-256",
  };
  const keys = (await webcrypto.subtle.generateKey(algorithm, true, [
    "sign",
    "verify",
  ])) as webcrypto.CryptoKeyPair;
  const jwk = await webcrypto.subtle.exportKey("jwk", keys.publicKey);
  const kid = "test-key";
  let url = "";
  const server: Server = createServer(
    { key: certificates.servingKey, cert: certificates.servingCert },
    (request, response) => {
      const send = (body: unknown) => {
        response.writeHead(200, { "content-type": "application/json" });
        response.end(JSON.stringify(body));
      };
      if (request.url === "/.well-known/openid-configuration") {
        send({
          issuer: url,
          jwks_uri: `${url}/keys`,
          authorization_endpoint: `${url}/authorize`,
          response_types_supported: ["id_token"],
          subject_types_supported: ["public"],
          id_token_signing_alg_values_supported: ["RS256"],
        });
      } else if (request.url === "/keys") {
        send({ keys: [{ kty: jwk.kty, n: jwk.n, e: jwk.e, alg: "RS256", use: "sig", kid }] });
      } else {
        response.writeHead(404).end();
      }
    },
  );
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  url = `https://${host.includes(":") ? `[${host}]` : host}:${(server.address() as AddressInfo).port}`;
  return {
    url,
    certificateAuthority: certificates.caCert,
    async token({ audience, subject, groups = [], ttlSeconds = 600 }) {
      const now = Math.floor(Date.now() / 1000);
      const header = base64url(JSON.stringify({ alg: "RS256", typ: "JWT", kid }));
      const payload = base64url(
        JSON.stringify({
          iss: url,
          aud: audience,
          sub: subject,
          groups,
          iat: now,
          nbf: now - 5,
          exp: now + ttlSeconds,
        }),
      );
      const signature = await webcrypto.subtle.sign(
        algorithm,
        keys.privateKey,
        Buffer.from(`${header}.${payload}`),
      );
      return `${header}.${payload}.${base64url(signature)}`;
    },
    stop: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
