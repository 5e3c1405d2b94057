/**
 * @module attachment-text/image
 * An image's format and dimensions from its header (PNG, GIF, JPEG, WebP, BMP): what an agent is told of an image,
 * since no text is read from one. JPEG segments are walked by their lengths, at most {@link MAX_SEGMENTS}.
 */
import { imageFormat } from './detect.js';

const MAX_SEGMENTS = 10_000;

/** Format, width and height (when the header says). */
export function imageInfo(bytes: Uint8Array): { format: string; width?: number; height?: number } {
  const format = imageFormat(bytes) ?? 'unknown';
  const view = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const size = (width: number, height: number) => ({ format, width, height });
  try {
    if (format === 'png' && view.length >= 24) return size(view.readUInt32BE(16), view.readUInt32BE(20));
    if (format === 'gif' && view.length >= 10) return size(view.readUInt16LE(6), view.readUInt16LE(8));
    if (format === 'bmp' && view.length >= 26) return size(view.readInt32LE(18), Math.abs(view.readInt32LE(22)));
    if (format === 'webp' && view.length >= 30) {
      const chunk = view.toString('latin1', 12, 16);
      if (chunk === 'VP8 ') return size(view.readUInt16LE(26) & 0x3fff, view.readUInt16LE(28) & 0x3fff);
      if (chunk === 'VP8L') {
        const bits = view.readUInt32LE(21);
        return size((bits & 0x3fff) + 1, ((bits >> 14) & 0x3fff) + 1);
      }
      if (chunk === 'VP8X') return size(view.readUIntLE(24, 3) + 1, view.readUIntLE(27, 3) + 1);
    }
    if (format === 'jpeg') {
      let at = 2;
      for (let segment = 0; segment < MAX_SEGMENTS && at + 9 < view.length; segment++) {
        if (view[at] !== 0xff) break;
        const marker = view[at + 1]!;
        // Start of frame (baseline, progressive …), not DHT (C4), JPG (C8) or DAC (CC).
        if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc)
          return size(view.readUInt16BE(at + 7), view.readUInt16BE(at + 5));
        at += 2 + view.readUInt16BE(at + 2);
      }
    }
  } catch {
    // A header cut short: the format alone.
  }
  return { format };
}
