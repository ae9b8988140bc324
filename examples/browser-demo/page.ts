// The demo page: log in with the account API, then send the camera and microphone to the relay with
// mediasoup-client and receive them back. Bundled by esbuild (start.ts); runs in the browser.
import { Device, type types } from 'mediasoup-client';
import QRCode from 'qrcode';

/** What the page exposes for the end-to-end test and for curious people in the console. */
interface DemoState {
  phase: 'logged-out' | 'ready' | 'joining' | 'live' | 'left' | 'error';
  error?: string;
  user?: { id: number; username: string };
  handlerName?: string;
  /** Cumulative counters from consumer.getStats() (inbound-rtp), refreshed twice a second. */
  stats: { audio?: InboundCounters; video?: InboundCounters };
  /** Milliseconds from the resume calls to the first received video frame on screen. */
  firstFrameMs?: number;
  /** The account's address and whether it is verified (GET /api/v1/auth/profile, issue 31). */
  email?: { address: string; verified: boolean };
  /** The account's sessions as last listed by GET /api/v1/auth/sessions. */
  devices: SignedInDevice[];
  /** This page's producer ids per kind (what the relay knows them by). */
  producers: { audio?: string; video?: string };
  /** Kinds whose received tile was removed because the relay closed its consumer. */
  removedTiles: string[];
  /** Why the relay ended the room (e.g. `worker_died`), when it did. */
  endedReason?: string;
  /** Chat messages received back through the relay's data consumer, in order. */
  chat: string[];
  /** Producers paused on the relay (mute), as the relay answered. */
  muted: { audio: boolean; video: boolean };
  /** The room joined (the name typed, or none: a room of this page's own). */
  room?: string;
  /** The others in the room whose media this page receives: username → consumer ids. */
  peers: Record<string, string[]>;
  /** The relay's active speaker (router.activeSpeaker, through the signaling server), and the tile highlighted for it. */
  activeSpeaker?: { producerId: string; username: string; tile: string | null };
  /** Issue 31: the otpauth URL drawn as a QR code, the recovery codes once enabled, the login's pending second step. */
  twoFactor: { otpauthUrl?: string; secret?: string; recoveryCodes?: string[]; mfaPending: boolean };
  /** Issue 41: the providers offered (GET /api/v1/auth/oidc/providers) and the account's linked identities. */
  providers: ProviderEntry[];
  identities: IdentityEntry[];
  /** How this page signed in: `password`, `passkey`, `oidc:<provider>`. */
  signedInWith?: string;
}
interface ProviderEntry {
  name: string;
  label: string;
}
interface IdentityEntry {
  id: string;
  provider: string;
  email: string | null;
  linked_at: string;
  last_used_at: string | null;
}
interface SignedInDevice {
  id: string;
  device: string | null;
  ip: string | null;
  created_at: string;
  last_used_at: string;
  current: boolean;
}
interface InboundCounters {
  at: number;
  packetsReceived: number;
  bytesReceived: number;
  packetsLost: number;
  framesDecoded?: number;
  frameWidth?: number;
  frameHeight?: number;
  codec?: string;
}

declare global {
  interface Window {
    demo: DemoState;
  }
}

const state: DemoState = {
  phase: 'logged-out',
  stats: {},
  devices: [],
  producers: {},
  removedTiles: [],
  chat: [],
  muted: { audio: false, video: false },
  peers: {},
  twoFactor: { mfaPending: false },
  providers: [],
  identities: [],
};
window.demo = state;

const $ = <T extends HTMLElement = HTMLElement>(id: string) => document.getElementById(id) as T;
const statusEl = $('status');
const joinButton = $<HTMLButtonElement>('join');
const leaveButton = $<HTMLButtonElement>('leave');

function setStatus(text: string, phase?: DemoState['phase']) {
  if (phase) state.phase = phase;
  statusEl.textContent = text;
  statusEl.classList.toggle('error', state.phase === 'error');
}

function fail(error: unknown) {
  const message = error instanceof Error ? error.message : String(error);
  state.error = message;
  setStatus(`Error: ${message}`, 'error');
  console.error(error);
}

// ---------------------------------------------------------------------------------------------
// Account API (proxied by the demo server under /api): register or log in, keep the access token.

let accessToken: string | undefined;

/** Thrown by a login that answered 2007: the password was right, the account asks for its second factor. */
class SecondFactorRequired extends Error {
  constructor(readonly mfaToken: string) {
    super('second factor required');
  }
}

let mfaToken: string | undefined;

async function account(path: 'register' | 'login' | 'login/mfa' | 'oidc/exchange', body: Record<string, string>) {
  const res = await fetch(`/api/v1/auth/${path}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });
  const envelope = (await res.json()) as { code: number; message: string; data: { token: string; user: { id: number; username: string } } | { mfa_token: string } | null };
  if (envelope.code === 2007 && envelope.data && 'mfa_token' in envelope.data) throw new SecondFactorRequired(envelope.data.mfa_token);
  if (envelope.code !== 0 || !envelope.data || !('token' in envelope.data)) throw new Error(`${path}: ${envelope.message} (code ${envelope.code})`);
  accessToken = envelope.data.token;
  state.user = { id: envelope.data.user.id, username: envelope.data.user.username };
}

function loggedIn() {
  setStatus(`Logged in as ${state.user?.username}. Join to start.`, 'ready');
  joinButton.disabled = false;
  $('two-factor').classList.remove('hidden');
  return Promise.all([refreshDevices(), refreshEmail(), refreshIdentities()]);
}

/** A sign-in answered 2007: show the second step (a TOTP code or a recovery code with the challenge, 5 minutes, 5 tries). */
function askSecondStep(error: unknown, what: string) {
  if (!(error instanceof SecondFactorRequired)) return fail(error);
  mfaToken = error.mfaToken;
  state.twoFactor.mfaPending = true;
  $('mfa').classList.remove('hidden');
  $('mfa-code').focus();
  setStatus(`${what}: type a code from your authenticator app (or a recovery code).`);
}

$<HTMLFormElement>('account').addEventListener('submit', (event) => {
  event.preventDefault();
  const form = new FormData(event.target as HTMLFormElement);
  const action = (event.submitter as HTMLButtonElement | null)?.value === 'login' ? 'login' : 'register';
  // Text inputs: a field's value is a string (a File only for file inputs, which the form has none of).
  const field = (name: string) => {
    const value = form.get(name);
    return typeof value === 'string' ? value : '';
  };
  const username = field('username');
  const password = field('password');
  const request =
    action === 'register'
      ? account('register', { username, password, email: field('email') || `${username}@example.com` })
      : account('login', { account: username, password });
  state.signedInWith = 'password';
  request.then(loggedIn, (error: unknown) => askSecondStep(error, 'Password right'));
});

$<HTMLFormElement>('mfa').addEventListener('submit', (event) => {
  event.preventDefault();
  const code = $<HTMLInputElement>('mfa-code').value.trim();
  const body: Record<string, string> = /^[0-9]{6}$/.test(code) ? { mfa_token: mfaToken ?? '', code } : { mfa_token: mfaToken ?? '', recovery_code: code };
  account('login/mfa', body).then(() => {
    mfaToken = undefined;
    state.twoFactor.mfaPending = false;
    $('mfa').classList.add('hidden');
    $<HTMLInputElement>('mfa-code').value = '';
    return loggedIn();
  }, fail);
});

// ---------------------------------------------------------------------------------------------
// Two-factor sign-in (issue 31): setup answers a secret and its otpauth URL, drawn here as a QR code
// (the qrcode package, bundled with the page) for an authenticator app; a code from the app enables it
// and the recovery codes are shown, once.

async function twoFactorCall<T>(path: string, body?: Record<string, string>): Promise<T> {
  const res = await fetch(`/api/v1/auth${path}`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${accessToken}`, ...(body ? { 'Content-Type': 'application/json' } : {}) },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  const envelope = (await res.json()) as { code: number; message: string; data: T };
  if (envelope.code !== 0) throw new Error(`POST ${path}: ${envelope.message} (code ${envelope.code})`);
  return envelope.data;
}

$('totp-setup').addEventListener('click', () => {
  twoFactorCall<{ secret: string; otpauth_url: string }>('/mfa/totp/setup')
    .then(async ({ secret, otpauth_url }) => {
      state.twoFactor.otpauthUrl = otpauth_url;
      state.twoFactor.secret = secret;
      await QRCode.toCanvas($<HTMLCanvasElement>('totp-qr'), otpauth_url, { width: 200, margin: 2 });
      $('totp-secret').textContent = secret;
      $('totp-pending').classList.remove('hidden');
      $('totp-code').focus();
    })
    .catch(fail);
});

$<HTMLFormElement>('totp-enable').addEventListener('submit', (event) => {
  event.preventDefault();
  twoFactorCall<{ recovery_codes: string[] }>('/mfa/totp/enable', { code: $<HTMLInputElement>('totp-code').value.trim() })
    .then(({ recovery_codes }) => {
      state.twoFactor.recoveryCodes = recovery_codes;
      $('totp-pending').classList.add('hidden');
      $<HTMLButtonElement>('totp-setup').disabled = true;
      $('totp-recovery').replaceChildren(
        ...recovery_codes.map((code) => {
          const item = document.createElement('li');
          item.textContent = code;
          return item;
        }),
      );
      $('totp-done').classList.remove('hidden');
    })
    .catch(fail);
});

// ---------------------------------------------------------------------------------------------
// Devices: the account's sessions (GET /api/v1/auth/sessions), each with a button that ends it
// (DELETE /api/v1/auth/sessions/:id). Ending this page's own session logs the page out.

async function authenticated<T>(method: 'GET' | 'DELETE' | 'POST', path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = { Authorization: `Bearer ${accessToken}` };
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  const res = await fetch(`/api/v1/auth${path}`, { method, headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
  const envelope = (await res.json()) as { code: number; message: string; data: T };
  if (envelope.code !== 0) throw new Error(`${method} ${path}: ${envelope.message} (code ${envelope.code})`);
  return envelope.data;
}

async function refreshDevices() {
  state.devices = await authenticated<SignedInDevice[]>('GET', '/sessions');
  // The passkeys of the account come with its devices (a failure there never hides the devices).
  void refreshPasskeys().catch(fail);
  $('devices').classList.remove('hidden');
  const rows = state.devices.map((d) => {
    const row = document.createElement('tr');
    row.dataset.sessionId = d.id;
    const cells = [d.device ?? 'unknown device', d.ip ?? '–', d.created_at, d.last_used_at];
    for (const [i, text] of cells.entries()) {
      const cell = document.createElement('td');
      cell.textContent = text;
      if (i === 0) {
        cell.className = 'device';
        cell.title = text;
        if (d.current) cell.classList.add('current');
      }
      row.append(cell);
    }
    const action = document.createElement('td');
    const end = document.createElement('button');
    end.className = 'end-session';
    end.textContent = d.current ? 'End (this page)' : 'End';
    end.addEventListener('click', () => void endDevice(d).catch(fail));
    action.append(end);
    row.append(action);
    return row;
  });
  $('devices-list').replaceChildren(...rows);
}

async function endDevice(device: SignedInDevice) {
  await authenticated('DELETE', `/sessions/${encodeURIComponent(device.id)}`);
  if (device.current) {
    await leave();
    accessToken = undefined;
    state.devices = [];
    $('devices').classList.add('hidden');
    $('email').classList.add('hidden');
    $('two-factor').classList.add('hidden');
    $('passkeys').classList.add('hidden');
    $('identities').classList.add('hidden');
    joinButton.disabled = true;
    setStatus('This session was ended. Log in again.', 'logged-out');
    return;
  }
  await refreshDevices();
}

$('devices-refresh').addEventListener('click', () => void refreshDevices().catch(fail));

// ---------------------------------------------------------------------------------------------
// Verify e-mail (issue 31): registration mailed a 6-digit code; POST /api/v1/auth/email/verify proves
// the address with it, POST /api/v1/auth/email/verify/resend mails a new one.

async function refreshEmail() {
  const profile = await authenticated<{ email: string; email_verified: boolean }>('GET', '/profile');
  state.email = { address: profile.email, verified: profile.email_verified };
  $('email').classList.remove('hidden');
  $('email-status').textContent = `${profile.email}: ${profile.email_verified ? 'verified' : 'not verified'}`;
  for (const id of ['email-code', 'email-verify', 'email-resend']) $<HTMLInputElement>(id).disabled = profile.email_verified;
}

$<HTMLFormElement>('verify-email').addEventListener('submit', (event) => {
  event.preventDefault();
  const code = $<HTMLInputElement>('email-code').value.trim();
  void authenticated('POST', '/email/verify', { code })
    .then(() => refreshEmail())
    .catch(fail);
});

$('email-resend').addEventListener('click', () => {
  void authenticated('POST', '/email/verify/resend')
    .then(() => setStatus('A new code is on its way (without SMTP_URL: in the service log).'))
    .catch(fail);
});

// ---------------------------------------------------------------------------------------------
// Passkeys (issue 31): the browser's own WebAuthn JSON helpers carry the service's options into
// navigator.credentials and its answer back (PublicKeyCredential.parseCreationOptionsFromJSON /
// parseRequestOptionsFromJSON and toJSON(): Chromium 129+, Firefox 119+, Safari 18.4+), so the page
// needs no WebAuthn library. Sign in needs no username: the authenticator offers its passkeys.

interface PasskeyEntry {
  id: string;
  name: string;
  created_at: string;
  last_used_at: string | null;
}

async function passkeyCall<T>(method: 'GET' | 'POST' | 'DELETE', path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = accessToken ? { Authorization: `Bearer ${accessToken}` } : {};
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  const res = await fetch(`/api/v1/auth/passkeys${path}`, { method, headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
  const envelope = (await res.json()) as { code: number; message: string; data: T };
  if (envelope.code !== 0) throw new Error(`passkeys${path}: ${envelope.message} (code ${envelope.code})`);
  return envelope.data;
}

async function signInWithPasskey() {
  const options = await passkeyCall<PublicKeyCredentialRequestOptionsJSON>('POST', '/login/options');
  const credential = (await navigator.credentials.get({ publicKey: PublicKeyCredential.parseRequestOptionsFromJSON(options) })) as PublicKeyCredential | null;
  if (!credential) throw new Error('no passkey was chosen');
  const response: unknown = credential.toJSON();
  const session = await passkeyCall<{ token: string; user: { id: number; username: string } }>('POST', '/login/verify', { response });
  accessToken = session.token;
  state.user = { id: session.user.id, username: session.user.username };
  // The sections a password login shows; the status says how this one signed in (set before anything
  // is awaited, so nobody reads loggedIn()'s own status in between).
  const sections = loggedIn();
  setStatus(`Signed in with a passkey as ${state.user.username}. Join to start.`, 'ready');
  await sections;
}

async function addPasskey() {
  const options = await passkeyCall<PublicKeyCredentialCreationOptionsJSON>('POST', '/register/options');
  const credential = (await navigator.credentials.create({ publicKey: PublicKeyCredential.parseCreationOptionsFromJSON(options) })) as PublicKeyCredential | null;
  if (!credential) throw new Error('no passkey was created');
  // No name: the service calls it "Passkey <n>".
  const response: unknown = credential.toJSON();
  await passkeyCall('POST', '/register/verify', { response });
  await refreshPasskeys();
}

async function refreshPasskeys() {
  const list = await passkeyCall<PasskeyEntry[]>('GET', '');
  $('passkeys').classList.remove('hidden');
  $('passkeys-list').replaceChildren(
    ...list.map((p) => {
      const row = document.createElement('tr');
      for (const text of [p.name, p.created_at, p.last_used_at ?? 'never']) {
        const cell = document.createElement('td');
        cell.textContent = text;
        row.append(cell);
      }
      const remove = document.createElement('button');
      remove.textContent = 'Remove';
      remove.addEventListener('click', () => void passkeyCall('DELETE', `/${encodeURIComponent(p.id)}`).then(refreshPasskeys).catch(fail));
      const action = document.createElement('td');
      action.append(remove);
      row.append(action);
      return row;
    }),
  );
}

$('passkey-login').addEventListener('click', () => void signInWithPasskey().catch(fail));

// ---------------------------------------------------------------------------------------------
// Sign in with a provider (issue 41): a button per configured provider starts the web flow
// (GET /api/v1/auth/oidc/:provider/start, through the demo server's proxy: 302 to the provider,
// its login and consent, back to the service's callback), which ends on this page with ?code= (or
// ?error=&error_code=); POST /api/v1/auth/oidc/exchange turns the one-time code into the session.

async function showProviders() {
  const res = await fetch('/api/v1/auth/oidc/providers');
  const envelope = (await res.json()) as { code: number; message: string; data: ProviderEntry[] };
  if (envelope.code !== 0) throw new Error(`oidc/providers: ${envelope.message} (code ${envelope.code})`);
  state.providers = envelope.data;
  $('oidc-providers').replaceChildren(
    ...envelope.data.map((p) => {
      const button = document.createElement('button');
      button.type = 'button';
      button.className = 'secondary';
      button.dataset.provider = p.name;
      button.textContent = `Sign in with ${p.label}`;
      // Back to this page: the service allows it (OIDC_REDIRECT_URIS, set by start.ts).
      const start = `/api/v1/auth/oidc/${encodeURIComponent(p.name)}/start?redirect_uri=${encodeURIComponent(`${location.origin}/`)}`;
      button.addEventListener('click', () => location.assign(start));
      return button;
    }),
  );
}

/** The end of a provider's web flow: this page opened with ?code= (or ?error=). */
async function finishProviderSignIn() {
  const params = new URLSearchParams(location.search);
  const code = params.get('code');
  const error = params.get('error');
  if (code === null && error === null) return;
  // The code works once: out of the address bar and the history.
  history.replaceState(null, '', location.pathname);
  if (error !== null) throw new Error(`sign in with a provider: ${error} (code ${params.get('error_code') ?? '?'})`);
  state.signedInWith = 'oidc';
  try {
    await account('oidc/exchange', { code: code! });
  } catch (failure) {
    askSecondStep(failure, 'Signed in at the provider');
    return;
  }
  const sections = loggedIn();
  setStatus(`Signed in with a provider as ${state.user?.username}. Join to start.`, 'ready');
  await sections;
}

async function refreshIdentities() {
  state.identities = await authenticated<IdentityEntry[]>('GET', '/identities');
  $('identities').classList.toggle('hidden', state.identities.length === 0);
  $('identities-list').replaceChildren(
    ...state.identities.map((i) => {
      const row = document.createElement('tr');
      row.dataset.provider = i.provider;
      for (const text of [state.providers.find((p) => p.name === i.provider)?.label ?? i.provider, i.email ?? '–', i.linked_at, i.last_used_at ?? 'never']) {
        const cell = document.createElement('td');
        cell.textContent = text;
        row.append(cell);
      }
      return row;
    }),
  );
}

void showProviders()
  .then(finishProviderSignIn)
  .catch(fail);
$('passkey-add').addEventListener('click', () => void addPasskey().catch(fail));

// ---------------------------------------------------------------------------------------------
// Signaling: the demo server's JSON endpoints. It checks the access token against the account API
// and calls the relay with its internal token, which this page never sees.

async function signal<T>(method: 'GET' | 'POST' | 'DELETE', path: string, body?: unknown): Promise<T> {
  const res = await fetch(`/signaling${path}`, {
    method,
    headers: { Authorization: `Bearer ${accessToken}`, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
    keepalive: method === 'DELETE',
  });
  if (res.status === 204) return undefined as T;
  const json = (await res.json()) as T & { error?: string };
  if (!res.ok) throw new Error(`${method} ${path}: ${json.error ?? res.status}`);
  return json;
}

type TransportParams = Pick<types.TransportOptions, 'id' | 'iceParameters' | 'iceCandidates' | 'dtlsParameters' | 'sctpParameters'>;
type DataConsumerParams = Pick<types.DataConsumerOptions, 'id' | 'dataProducerId' | 'sctpStreamParameters' | 'label' | 'protocol'>;
type ConsumerParams = Pick<types.ConsumerOptions, 'id' | 'producerId' | 'kind' | 'rtpParameters'>;

interface Call {
  sessionId: string;
  device: Device;
  /** Consumers of the others in the room (not this page's own media coming back). */
  peerConsumers: Map<string, { consumer: types.Consumer; username: string }>;
  stream: MediaStream;
  sendTransport: types.Transport;
  recvTransport: types.Transport;
  producers: types.Producer[];
  consumers: types.Consumer[];
  chat?: types.DataProducer;
  statsTimer?: number;
}
let call: Call | undefined;

/** Wires a mediasoup-client transport's `connect` event to the relay's connect, through signaling. */
function onConnect(transport: types.Transport, sessionId: string) {
  transport.on('connect', ({ dtlsParameters }, callback, errback) => {
    signal('POST', `/sessions/${sessionId}/transports/${transport.id}/connect`, { dtlsParameters }).then(() => callback(), errback);
  });
}

function connected(transport: types.Transport, timeoutMs = 10_000): Promise<void> {
  if (transport.connectionState === 'connected') return Promise.resolve();
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${transport.direction} transport not connected after ${timeoutMs} ms`)), timeoutMs);
    transport.on('connectionstatechange', (s) => {
      if (s === 'connected') {
        clearTimeout(timer);
        resolve();
      } else if (s === 'failed' || s === 'closed') {
        clearTimeout(timer);
        reject(new Error(`${transport.direction} transport ${s}`));
      }
    });
  });
}

/**
 * TURN (issue 28): the ICE servers the account API hands this user (GET /api/v1/auth/ice-servers; none
 * when the service has no TURN_URLS), for both transports. `?relay=1` in the page's URL forces
 * iceTransportPolicy 'relay', so the call goes through TURN even where the relay is reachable directly.
 */
async function iceOptions(): Promise<{ iceServers: RTCIceServer[]; iceTransportPolicy: RTCIceTransportPolicy }> {
  const res = await fetch('/api/v1/auth/ice-servers', { headers: { Authorization: `Bearer ${accessToken}` } });
  const envelope = (await res.json()) as { code: number; message: string; data: { ice_servers: RTCIceServer[]; expires_in: number } | null };
  if (envelope.code !== 0 || !envelope.data) throw new Error(`ice-servers: ${envelope.message}`);
  const relayOnly = new URLSearchParams(location.search).get('relay') === '1';
  if (relayOnly && envelope.data.ice_servers.length === 0) throw new Error('?relay=1 needs TURN: start the demo with TURN_URLS and TURN_SECRET (examples/browser-demo/README.md)');
  return { iceServers: envelope.data.ice_servers, iceTransportPolicy: relayOnly ? 'relay' : 'all' };
}

async function join() {
  joinButton.disabled = true;
  setStatus('Joining…', 'joining');

  // 1. A session in the room typed (or one of its own) and the room's router RTP capabilities.
  const roomName = $<HTMLInputElement>('room').value.trim();
  state.room = roomName || undefined;
  const { sessionId, routerRtpCapabilities } = await signal<{ sessionId: string; routerRtpCapabilities: types.RtpCapabilities }>(
    'POST',
    '/sessions',
    roomName ? { room: roomName } : undefined,
  );

  // 2. The device learns what the router can do and what this browser can do.
  const device = new Device();
  await device.load({ routerRtpCapabilities });
  state.handlerName = device.handlerName;

  // 3. Camera and microphone.
  const stream = await navigator.mediaDevices.getUserMedia({ audio: true, video: { width: 640, height: 480 } });
  $<HTMLVideoElement>('local').srcObject = stream;
  const localTile = $('local-tile');
  localTile.dataset.user = state.user?.username ?? '';
  localTile.querySelector('figcaption')!.textContent = `Local camera · ${state.user?.username ?? ''}`;

  // 4. Send transport: `connect` fires on the first produce(), `produce` once per track. Both
  //    transports get the TURN servers (and with ?relay=1 may use nothing else).
  const ice = await iceOptions();
  const sendTransport = device.createSendTransport({ ...(await signal<TransportParams>('POST', `/sessions/${sessionId}/transports`, { direction: 'send' })), ...ice });
  onConnect(sendTransport, sessionId);
  sendTransport.on('produce', ({ kind, rtpParameters }, callback, errback) => {
    signal<{ id: string }>('POST', `/sessions/${sessionId}/producers`, { transportId: sendTransport.id, kind, rtpParameters }).then(callback, errback);
  });
  sendTransport.on('producedata', ({ sctpStreamParameters, label, protocol }, callback, errback) => {
    signal<{ id: string }>('POST', `/sessions/${sessionId}/data-producers`, { transportId: sendTransport.id, sctpStreamParameters, label, protocol }).then(
      callback,
      errback,
    );
  });
  const producers: types.Producer[] = [];
  for (const track of stream.getTracks()) producers.push(await sendTransport.produce({ track }));
  for (const p of producers) state.producers[p.kind] = p.id;
  $('producers').textContent = producers.map((p) => `${p.kind} ${p.rtpParameters.codecs[0]?.mimeType}`).join(', ');

  // 5. Receive transport and consumers. The relay creates consumers paused; `connect` fires on
  //    the first consume().
  const recvTransport = device.createRecvTransport({ ...(await signal<TransportParams>('POST', `/sessions/${sessionId}/transports`, { direction: 'recv' })), ...ice });
  onConnect(recvTransport, sessionId);
  call = { sessionId, device, peerConsumers: new Map(), stream, sendTransport, recvTransport, producers, consumers: [] };
  for (const producer of producers) {
    const params = await signal<ConsumerParams>('POST', `/sessions/${sessionId}/consumers`, {
      transportId: recvTransport.id,
      producerId: producer.id,
      rtpCapabilities: device.rtpCapabilities,
    });
    call.consumers.push(await recvTransport.consume(params));
  }
  // Chat: a data channel to the relay and back (a data producer, relayed to a data consumer).
  call.chat = await sendTransport.produceData({ label: 'chat', protocol: 'text' });
  const chatIn = await recvTransport.consumeData(
    await signal<DataConsumerParams>('POST', `/sessions/${sessionId}/data-consumers`, { transportId: recvTransport.id, dataProducerId: call.chat.id }),
  );
  chatIn.on('message', (message: unknown) => {
    const text = typeof message === 'string' ? message : String(message);
    state.chat.push(text);
    const item = document.createElement('li');
    item.textContent = text;
    $('chat-log').append(item);
  });
  const video = call.consumers.find((c) => c.kind === 'video');
  const audio = call.consumers.find((c) => c.kind === 'audio');
  const remote = $<HTMLVideoElement>('remote');
  remote.hidden = false;
  if (video) remote.srcObject = new MediaStream([video.track]);
  if (audio) $<HTMLAudioElement>('remote-audio').srcObject = new MediaStream([audio.track]);

  // 6. Resume once the receive transport is connected (ICE and DTLS done), so the first video
  //    packets, a keyframe asked for on resume, are not lost to a handshake still running.
  await connected(recvTransport);
  const resumedAt = performance.now();
  await Promise.all(call.consumers.map((c) => signal('POST', `/sessions/${sessionId}/consumers/${c.id}/resume`)));
  remote.requestVideoFrameCallback(() => {
    state.firstFrameMs = Math.round(performance.now() - resumedAt);
    $('timing').textContent = `first received frame ${state.firstFrameMs} ms after resume · handler ${state.handlerName}`;
  });

  leaveButton.disabled = false;
  for (const kind of ['audio', 'video'] as const) muteButton(kind).disabled = false;
  $<HTMLButtonElement>('chat-send').disabled = false;
  setStatus(`Live as ${state.user?.username}: your media goes through the relay and back.`, 'live');
  call.statsTimer = window.setInterval(() => void refreshStats().then(followRelay).catch(fail), 500);
}

type Notice = { type: string; consumerId?: string; reason: string };
type Speaker = { producerId: string; username: string };

/**
 * What the relay reported, through the signaling server (which follows the relay's event stream): a
 * consumer closed there (its producer closed, for any reason) loses its tile; a room the relay closed
 * (its worker died, the relay shut down) ends the call.
 */
async function followRelay() {
  const current = call;
  if (!current) return;
  const { notices, ended, activeSpeaker } = await signal<{ notices: Notice[]; ended: string | null; activeSpeaker: Speaker | null }>(
    'GET',
    `/sessions/${current.sessionId}/notices`,
  );
  for (const notice of notices) {
    if (notice.type !== 'consumer.closed') continue;
    const peer = current.peerConsumers.get(notice.consumerId ?? '');
    if (peer) {
      current.peerConsumers.delete(notice.consumerId!);
      peer.consumer.close();
      removePeerConsumer(peer.username, peer.consumer.id);
      continue;
    }
    const consumer = current.consumers.find((c) => c.id === notice.consumerId);
    if (!consumer) continue;
    current.consumers = current.consumers.filter((c) => c !== consumer);
    consumer.close();
    removeTile(consumer.kind);
  }
  if (ended && call === current) {
    call = undefined;
    window.clearInterval(current.statsTimer);
    current.sendTransport.close();
    current.recvTransport.close();
    for (const track of current.stream.getTracks()) track.stop();
    for (const kind of ['audio', 'video'] as const) removeTile(kind);
    state.endedReason = ended;
    leaveButton.disabled = true;
    joinButton.disabled = false;
    setStatus(`The relay ended the room (${ended}). Join again to restart.`, 'left');
    return;
  }
  if (call === current) {
    await consumePeers(current);
    highlight(activeSpeaker);
  }
}

// ---------------------------------------------------------------------------------------------
// The others in the room: each gets a tile with their camera and microphone, consumed from the relay.

/** Set while consumePeers runs: the 500 ms timer must not consume the same producer twice. */
let consumingPeers = false;

async function consumePeers(current: Call) {
  if (consumingPeers) return;
  consumingPeers = true;
  try {
    await consumeNewPeers(current);
  } finally {
    consumingPeers = false;
  }
}

async function consumeNewPeers(current: Call) {
  const { peers } = await signal<{ peers: { username: string; producerIds: string[] }[] }>('GET', `/sessions/${current.sessionId}/peers`);
  const consumed = new Set([...current.peerConsumers.values()].map((p) => p.consumer.producerId));
  for (const peer of peers) {
    for (const producerId of peer.producerIds.filter((id) => !consumed.has(id))) {
      const params = await signal<ConsumerParams>('POST', `/sessions/${current.sessionId}/consumers`, {
        transportId: current.recvTransport.id,
        producerId,
        rtpCapabilities: current.device.rtpCapabilities,
      });
      const consumer = await current.recvTransport.consume(params);
      current.peerConsumers.set(consumer.id, { consumer, username: peer.username });
      const tile = peerTile(peer.username);
      const element = tile.querySelector<HTMLMediaElement>(consumer.kind)!;
      element.srcObject = new MediaStream([consumer.track]);
      void element.play().catch(() => {}); // an element added after load does not always start on autoplay alone
      (state.peers[peer.username] ??= []).push(consumer.id);
      await signal('POST', `/sessions/${current.sessionId}/consumers/${consumer.id}/resume`);
    }
  }
}

function peerTile(username: string): HTMLElement {
  const existing = document.querySelector<HTMLElement>(`figure.peer[data-user="${CSS.escape(username)}"]`);
  if (existing) return existing;
  const tile = document.createElement('figure');
  tile.className = 'peer';
  tile.dataset.user = username;
  const caption = document.createElement('figcaption');
  caption.textContent = username;
  const video = document.createElement('video');
  video.autoplay = video.muted = video.playsInline = true;
  const audio = document.createElement('audio');
  audio.autoplay = true;
  audio.muted = !$<HTMLInputElement>('hear').checked;
  tile.append(caption, video, audio);
  $('peers').append(tile);
  return tile;
}

function removePeerConsumer(username: string, consumerId: string) {
  const left = (state.peers[username] ?? []).filter((id) => id !== consumerId);
  if (left.length > 0) {
    state.peers[username] = left;
    return;
  }
  delete state.peers[username];
  document.querySelector(`figure.peer[data-user="${CSS.escape(username)}"]`)?.remove();
}

/** Outlines the tile of whoever the relay says speaks: this page's own camera, or a peer's tile. */
function highlight(speaker: Speaker | null) {
  for (const tile of document.querySelectorAll('figure.speaking')) tile.classList.remove('speaking');
  if (!speaker) return;
  const own = speaker.username === state.user?.username;
  const tile = own ? $('local-tile') : document.querySelector<HTMLElement>(`figure.peer[data-user="${CSS.escape(speaker.username)}"]`);
  tile?.classList.add('speaking');
  state.activeSpeaker = { ...speaker, tile: tile ? (tile.dataset.user ?? null) : null };
  $('speaker').textContent = tile ? `${speaker.username} speaks` : '';
}

function removeTile(kind: 'audio' | 'video') {
  const element = kind === 'video' ? $<HTMLVideoElement>('remote') : $<HTMLAudioElement>('remote-audio');
  if (!element.srcObject) return;
  element.srcObject = null;
  element.hidden = kind === 'video';
  state.removedTiles.push(kind);
}

async function leave() {
  const current = call;
  call = undefined;
  if (!current) return;
  leaveButton.disabled = true;
  $<HTMLButtonElement>('chat-send').disabled = true;
  for (const kind of ['audio', 'video'] as const) {
    muteButton(kind).disabled = true;
    showMuted(kind, false);
  }
  window.clearInterval(current.statsTimer);
  current.sendTransport.close();
  current.recvTransport.close();
  for (const track of current.stream.getTracks()) track.stop();
  $('peers').replaceChildren();
  state.peers = {};
  highlight(null);
  await signal('DELETE', `/sessions/${current.sessionId}`).catch(() => {});
  setStatus('Left. Join again to restart.', 'left');
  joinButton.disabled = false;
}

// ---------------------------------------------------------------------------------------------
// Live counters from consumer.getStats(): only this consumer's RTCRtpReceiver, unlike
// transport.getStats(), which also lists mediasoup-client's probator stream.

const previous: Partial<Record<'audio' | 'video', InboundCounters>> = {};

async function refreshStats() {
  for (const consumer of call?.consumers ?? []) {
    const report = await consumer.getStats();
    let inbound: Record<string, unknown> | undefined;
    const codecs = new Map<string, string>();
    report.forEach((s: Record<string, unknown>) => {
      if (s.type === 'inbound-rtp') inbound = s;
      if (s.type === 'codec') codecs.set(String(s.id), String(s.mimeType));
    });
    if (!inbound) continue;
    const kind = consumer.kind;
    const num = (v: unknown) => (typeof v === 'number' ? v : 0);
    const now: InboundCounters = {
      at: performance.now(),
      packetsReceived: num(inbound.packetsReceived),
      bytesReceived: num(inbound.bytesReceived),
      packetsLost: num(inbound.packetsLost),
      codec: codecs.get(String(inbound.codecId)),
      ...(kind === 'video'
        ? { framesDecoded: num(inbound.framesDecoded), frameWidth: num(inbound.frameWidth), frameHeight: num(inbound.frameHeight) }
        : {}),
    };
    const before = previous[kind];
    const seconds = before ? (now.at - before.at) / 1000 : 0;
    const rate = (a: number, b: number | undefined) => (seconds > 0 && b !== undefined ? ((a - b) / seconds).toFixed(0) : '–');
    $(`${kind}-packets`).textContent = now.packetsReceived.toLocaleString('en');
    $(`${kind}-bytes`).textContent = now.bytesReceived.toLocaleString('en');
    $(`${kind}-lost`).textContent = String(now.packetsLost);
    $(`${kind}-pps`).textContent = rate(now.packetsReceived, before?.packetsReceived);
    $(`${kind}-codec`).textContent = now.codec ?? '–';
    if (kind === 'video') {
      $('video-frames').textContent = String(now.framesDecoded);
      $('video-fps').textContent = `${rate(now.framesDecoded ?? 0, before?.framesDecoded)} · ${now.frameWidth}×${now.frameHeight}`;
    }
    previous[kind] = now;
    state.stats[kind] = now;
  }
}

// Mute/unmute: the relay pauses or resumes the producer (nothing forwarded while paused); the
// remote tile shows what the relay answered.
const muteButton = (kind: 'audio' | 'video') => $<HTMLButtonElement>(`mute-${kind}`);

function showMuted(kind: 'audio' | 'video', muted: boolean) {
  state.muted[kind] = muted;
  muteButton(kind).textContent = `${muted ? 'Unmute' : 'Mute'} ${kind === 'audio' ? 'microphone' : 'camera'}`;
  $(`remote-${kind}-muted`).hidden = !muted;
}

async function toggleMute(kind: 'audio' | 'video') {
  const producer = call?.producers.find((p) => p.kind === kind);
  if (!call || !producer) return;
  const action = state.muted[kind] ? 'resume' : 'pause';
  const { paused } = await signal<{ paused: boolean }>('POST', `/sessions/${call.sessionId}/producers/${producer.id}/${action}`);
  showMuted(kind, paused);
}

$<HTMLFormElement>('chat').addEventListener('submit', (event) => {
  event.preventDefault();
  const input = $<HTMLInputElement>('chat-text');
  if (!call?.chat || input.value === '') return;
  call.chat.send(input.value);
  input.value = '';
});

for (const kind of ['audio', 'video'] as const) muteButton(kind).addEventListener('click', () => void toggleMute(kind).catch(fail));
joinButton.addEventListener('click', () => void join().catch(fail));
leaveButton.addEventListener('click', () => void leave().catch(fail));
$<HTMLInputElement>('hear').addEventListener('change', (event) => {
  const hear = (event.target as HTMLInputElement).checked;
  $<HTMLAudioElement>('remote-audio').muted = !hear;
  for (const audio of document.querySelectorAll<HTMLAudioElement>('figure.peer audio')) audio.muted = !hear;
});
// Closing the tab leaves the session too (a keepalive DELETE outlives the page).
window.addEventListener('pagehide', () => void leave());
