// RTP payloads the tests write and read back: every packet carries a running index so that a
// receiver can tell order and loss apart from whatever the relay rewrites (SSRC, sequence, PictureID).
import { RtpHeader, RtpPacket } from 'werift';

const INDEX_BYTES = 4;

/**
 * An opus packet: a TOC byte (SILK, 20 ms, mono frame) then the index and filler; the relay never
 * decodes opus, but it does look at the payload size (a 1-byte payload would count as DTX).
 */
export function opusPacket(index: number, sequenceNumber: number, timestamp: number, audioLevel?: AudioLevelExtension): RtpPacket {
  const payload = Buffer.alloc(1 + INDEX_BYTES + 40, 0x5a);
  payload[0] = 0x08;
  payload.writeUInt32BE(index >>> 0, 1);
  const header = new RtpHeader({ sequenceNumber, timestamp, marker: false });
  if (audioLevel) {
    // RFC 6464 one-byte element: V (voice activity) then the level in -dBov, 0 loudest to 127 silence.
    header.extension = true;
    header.extensions = [{ id: audioLevel.id, payload: Buffer.from([0x80 | (audioLevel.level & 0x7f)]) }];
  }
  return new RtpPacket(header, payload);
}

export const AUDIO_LEVEL_URI = 'urn:ietf:params:rtp-hdrext:ssrc-audio-level';

/** The ssrc-audio-level header extension: the id the producer's rtpParameters give it, and the level (0..127 = -dBov). */
export interface AudioLevelExtension {
  id: number;
  level: number;
}

/**
 * A one-packet VP8 frame. mediasoup 3.11 drops VP8 without a PictureID, so the payload descriptor
 * is always extended (X=1) with I=1 and a 15-bit PictureID (M=1), and S=1 for the partition start.
 * A keyframe has P=0 in the frame tag followed by the VP8 start code and dimensions; video consumers
 * forward nothing until they have seen one.
 */
export function vp8Packet(index: number, sequenceNumber: number, timestamp: number, pictureId: number, keyframe: boolean, fillerBytes = 200): RtpPacket {
  const descriptor = Buffer.from([0x90, 0x80, 0x80 | ((pictureId >> 8) & 0x7f), pictureId & 0xff]);
  // Frame tag: bit 0 = P (0 = keyframe), bit 4 = show_frame; first-partition size left at 0.
  const frame = keyframe
    ? Buffer.from([0x10, 0x00, 0x00, 0x9d, 0x01, 0x2a, 0x40, 0x01, 0xf0, 0x00]) // start code, 320x240
    : Buffer.from([0x11, 0x00, 0x00]);
  const index_ = Buffer.alloc(INDEX_BYTES);
  index_.writeUInt32BE(index >>> 0, 0);
  const payload = Buffer.concat([descriptor, frame, index_, Buffer.alloc(fillerBytes, 0xa5)]);
  return new RtpPacket(new RtpHeader({ sequenceNumber, timestamp, marker: true }), payload);
}

export interface ReadPacket {
  index: number;
  sequenceNumber: number;
  keyframe: boolean;
}

export function readOpusPacket(packet: RtpPacket): ReadPacket {
  return { index: packet.payload.readUInt32BE(1), sequenceNumber: packet.header.sequenceNumber, keyframe: false };
}

export function readVp8Packet(packet: RtpPacket): ReadPacket {
  const p = packet.payload;
  let offset = 1;
  if (p[0]! & 0x80) {
    const ext = p[offset++]!;
    if (ext & 0x80) offset += p[offset]! & 0x80 ? 2 : 1; // PictureID
    if (ext & 0x40) offset += 1; // TL0PICIDX
    if (ext & 0x30) offset += 1; // TID / KEYIDX
  }
  const keyframe = (p[offset]! & 0x01) === 0;
  const index = p.readUInt32BE(offset + (keyframe ? 10 : 3));
  return { index, sequenceNumber: packet.header.sequenceNumber, keyframe };
}
