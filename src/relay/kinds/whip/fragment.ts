// The trickle-ice-sdpfrag (RFC 8840) of a PATCH on a session: what the relay reads of the client's
// (a new ufrag/pwd is an ICE restart; candidates are counted and bounded) and the fragment it answers.
import { ICE_CHARS, SDP_BOUNDS, SdpError, type TransportSide } from './sdp.js';

/** A trickle-ice-sdpfrag (RFC 8840) as PATCH carries it: its ufrag/pwd (an ICE restart when new) and candidates. */
export interface SdpFragment {
  readonly iceUfrag?: string;
  readonly icePwd?: string;
  readonly candidates: number;
}

export function readFragment(text: string): SdpFragment {
  if (Buffer.byteLength(text) > SDP_BOUNDS.fragmentBytes) throw new SdpError(`fragment exceeds ${SDP_BOUNDS.fragmentBytes} bytes`);
  let iceUfrag: string | undefined;
  let icePwd: string | undefined;
  let candidates = 0;
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.trim();
    if (line.startsWith('a=ice-ufrag:')) iceUfrag = line.slice(12);
    else if (line.startsWith('a=ice-pwd:')) icePwd = line.slice(10);
    else if (line.startsWith('a=candidate:')) candidates += 1;
  }
  if (candidates > SDP_BOUNDS.candidates) throw new SdpError(`fragment has more than ${SDP_BOUNDS.candidates} candidates`);
  if (iceUfrag !== undefined && (!ICE_CHARS.test(iceUfrag) || iceUfrag.length < 4 || iceUfrag.length > 256)) throw new SdpError('invalid a=ice-ufrag');
  if (icePwd !== undefined && (!ICE_CHARS.test(icePwd) || icePwd.length < 22 || icePwd.length > 256)) throw new SdpError('invalid a=ice-pwd');
  return { ...(iceUfrag === undefined ? {} : { iceUfrag }), ...(icePwd === undefined ? {} : { icePwd }), candidates };
}

/** The relay's answer fragment to an ICE restart: its new ufrag/pwd and its candidates. */
export function writeFragment(side: Pick<TransportSide, 'iceParameters' | 'iceCandidates'>, mid: string): string {
  const lines = [`a=ice-lite`, `a=ice-ufrag:${side.iceParameters.usernameFragment}`, `a=ice-pwd:${side.iceParameters.password}`, `m=audio 9 UDP/TLS/RTP/SAVPF 0`, `a=mid:${mid}`];
  for (const c of side.iceCandidates) {
    const ip = (c as unknown as { address?: string; ip?: string }).address ?? (c as unknown as { ip: string }).ip;
    lines.push(`a=candidate:${c.foundation} 1 ${c.protocol} ${c.priority} ${ip} ${c.port} typ ${c.type}${c.tcpType ? ` tcptype ${c.tcpType}` : ''}`);
  }
  lines.push('a=end-of-candidates');
  return `${lines.join('\r\n')}\r\n`;
}
