import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { TLSSocket } from 'node:tls';
import type { DeliveryDestination } from '../destinations/destination';
import { generateSecret } from '../signing';
import { WebhookClient } from './webhook-client';

// mTLS against a real HTTPS receiver that asks for a client certificate, with a CA of its own: certificates made
// here by openssl (Node has no X.509 writer, and no library for one is among the dependencies).
describe('a receiver that asks for a client certificate (mTLS)', () => {
  let dir = '';
  const pem: Record<string, string> = {};
  let server: https.Server;
  let url = '';

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'plant-store-mtls-'));
    const openssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
    const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
    openssl('req', '-x509', ...ec, '-keyout', 'ca.key', '-out', 'ca.crt', '-days', '1', '-subj', '/CN=Receiver CA');
    const issue = (name: string, cn: string, ext: string) => {
      writeFileSync(path.join(dir, `${name}.ext`), ext);
      openssl('req', ...ec, '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', `/CN=${cn}`);
      openssl(
        'x509',
        '-req',
        '-in',
        `${name}.csr`,
        '-CA',
        'ca.crt',
        '-CAkey',
        'ca.key',
        '-CAcreateserial',
        '-out',
        `${name}.crt`,
        '-days',
        '1',
        '-extfile',
        `${name}.ext`,
      );
    };
    issue('server', 'localhost', 'subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n');
    issue('client', 'plant-store', 'extendedKeyUsage=clientAuth\n');
    for (const f of ['ca.crt', 'server.key', 'server.crt', 'client.key', 'client.crt'])
      pem[f] = readFileSync(path.join(dir, f), 'utf8');

    server = https.createServer(
      {
        key: pem['server.key'],
        cert: pem['server.crt'],
        ca: pem['ca.crt'],
        requestCert: true,
        rejectUnauthorized: true,
      },
      (req, res) => {
        const peer = (req.socket as TLSSocket).getPeerCertificate();
        req.resume().on('end', () => res.writeHead(202).end(`hello ${peer.subject.CN}`));
      },
    );
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `https://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  });
  afterAll(() => {
    rmSync(dir, { recursive: true, force: true });
    server.closeAllConnections();
    return new Promise((r) => server.close(r));
  });

  const request = (destination: DeliveryDestination) => ({
    url,
    messageId: 'msg_1',
    body: '{"id":1}',
    secrets: [generateSecret()],
    token: null,
    hops: 0,
    originEventId: 'msg_1',
    destination,
  });

  it('is accepted with the certificate and key, and the receiver CA verified', async () => {
    const client = new WebhookClient(true, 5000);
    const mtls = {
      settings: { tls: { ca: pem['ca.crt'], cert: pem['client.crt'] } },
      secrets: { key: pem['client.key'] },
    };
    const first = await client.send(request(mtls));
    const again = await client.send(request(mtls)); // through the same agent, kept for this certificate
    await client.close();
    expect(first).toMatchObject({ status: 202, responseBody: 'hello plant-store', error: null });
    expect(again.status).toBe(202);
  });

  it('is refused without a client certificate: an attempt with an error', async () => {
    const client = new WebhookClient(true, 5000);
    const r = await client.send(request({ settings: { tls: { ca: pem['ca.crt'] } }, secrets: {} }));
    await client.close();
    expect(r.status).toBeNull();
    expect(r.error).toEqual(expect.any(String));
  });

  it('refuses a receiver whose certificate is not from the CA given (or a public one)', async () => {
    const client = new WebhookClient(true, 5000);
    const noCa = await client.send(
      request({ settings: { tls: { cert: pem['client.crt'] } }, secrets: { key: pem['client.key'] } }),
    );
    await client.close();
    expect(noCa).toMatchObject({ status: null, error: expect.stringMatching(/CERT|SIGNATURE|ISSUER/) });
  });
});
