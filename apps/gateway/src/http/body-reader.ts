import type { IncomingMessage } from 'node:http';
import type { Readable } from 'node:stream';
import { errorCodes } from 'fastify';
import type { Reservation, Shortfall } from './body-budget';

/** The first block of a body whose size is not announced (chunked, or decoded): a small webhook fits in it. */
export const FIRST_BLOCK_BYTES = 4096;

/** Why a body was not read: over the per-request limit, or the budget or the sender's share is spent. */
export type Refusal = 'too-large' | Shortfall;

/** An error that ended a body before it was read whole; `refusal` when the gateway refused it, not the sender. */
export type BodyError = Error & { statusCode?: number; refusal?: Refusal };

/**
 * A body's bytes, copied as they arrive into blocks the reservation pays for: a block is reserved before it is
 * allocated, so the bytes held are never more than the bytes reserved. Copying (rather than keeping the chunks
 * Node hands over) makes the count exact: a chunk is a view that keeps its whole socket read alive, and a sender
 * writing one byte at a time would otherwise hold an object per byte. Blocks double (a body announced by its
 * Content-Length gets one block of that size, reserved before a byte is read), so a body takes O(log n) blocks.
 */
export class BodyBlocks {
  private readonly blocks: Buffer[] = [];
  private capacity = 0;
  private filled = 0;

  constructor(
    private readonly reservation: Reservation,
    private readonly maxBytes: number,
  ) {}

  get length(): number {
    return this.filled;
  }

  /** Reserves and allocates room for `bytes` more at once (an announced Content-Length). */
  reserve(bytes: number): Refusal | null {
    if (this.filled + bytes > this.maxBytes) return 'too-large';
    const short = this.capacity - this.filled;
    return bytes > short ? this.addBlock(bytes - short) : null;
  }

  append(chunk: Buffer): Refusal | null {
    if (this.filled + chunk.length > this.maxBytes) return 'too-large';
    let from = 0;
    while (from < chunk.length) {
      if (this.filled === this.capacity) {
        const size = Math.min(this.maxBytes - this.capacity, Math.max(FIRST_BLOCK_BYTES, this.capacity));
        const refusal = this.addBlock(size);
        if (refusal) return refusal;
      }
      const block = this.blocks[this.blocks.length - 1];
      const copied = chunk.copy(block, block.length - (this.capacity - this.filled), from);
      from += copied;
      this.filled += copied;
    }
    return null;
  }

  /** The body as one Buffer: the block itself when it took one, else one copy of the filled bytes. */
  bytes(): Buffer {
    if (this.blocks.length === 0) return Buffer.alloc(0);
    if (this.blocks.length === 1) return this.blocks[0].subarray(0, this.filled);
    return Buffer.concat(this.blocks, this.filled);
  }

  private addBlock(size: number): Refusal | null {
    const refusal = this.reservation.grow(size);
    if (refusal) return refusal;
    // Uninitialised memory is never shown: only the bytes copied in are read (bytes() cuts at `filled`).
    this.blocks.push(Buffer.allocUnsafe(size));
    this.capacity += size;
    return null;
  }
}

/**
 * Reads one request body within its reservation and hands it over as a Buffer, in place of Fastify's reader
 * (which kept the unfinished body as a string). `raw` is the request, `payload` what to read: the request
 * itself, or a decoder's output (content-encoding.ts). A body announced by Content-Length is reserved whole
 * before a byte of it is read, so a request over the budget is refused at once; any other grows its
 * reservation as it arrives. However the read ends, the reservation is released before `done` is called (the
 * caller parses the Buffer at once, synchronously): the body read whole, too large, refused, failed (a decoder
 * error), aborted or timed out (the socket closes: the request emits 'error' or 'close'). `done` is called once.
 */
export function readBody(
  raw: IncomingMessage,
  payload: Readable,
  reservation: Reservation,
  maxBytes: number,
  done: (err: BodyError | null, body?: Buffer) => void,
): void {
  const contentLength = Number(raw.headers['content-length']);
  const decoded = payload !== raw;
  const blocks = new BodyBlocks(reservation, maxBytes);
  let ended = false;

  const finish = (err: BodyError | null) => {
    if (ended) return;
    ended = true;
    payload.off('data', onData);
    payload.off('end', onEnd);
    payload.off('error', onError);
    payload.off('close', onClose);
    raw.off('close', onClose);
    const body = err ? undefined : blocks.bytes();
    reservation.release();
    // A decoder no one reads any more would hold its window and its turn until the socket closes: end it now.
    // (The request itself is left to Node: destroying it would destroy the socket before the answer is sent.)
    if (err && decoded) payload.destroy();
    done(err, body);
  };
  const refuse = (refusal: Refusal) => finish(Object.assign(new Error(refusal), { refusal }));
  const onData = (chunk: Buffer | string) => {
    const refusal = blocks.append(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
    if (refusal) refuse(refusal);
  };
  const onEnd = () => {
    // As Fastify checks: the bytes that came off the wire (a decoder counts them) are the announced ones.
    const received = (payload as { receivedEncodedLength?: number }).receivedEncodedLength || blocks.length;
    if (!Number.isNaN(contentLength) && received !== contentLength)
      return finish(new errorCodes.FST_ERR_CTP_INVALID_CONTENT_LENGTH());
    finish(null);
  };
  const onError = (err: BodyError) => {
    if (!(typeof err.statusCode === 'number' && err.statusCode >= 400)) err.statusCode = 400;
    finish(err);
  };
  // The request (or its decoder) closed before its body ended: the sender went away or was cut (a timeout).
  const onClose = () => {
    if (raw === payload || !raw.complete || payload.destroyed)
      finish(Object.assign(new Error('The request closed before its body arrived whole'), { statusCode: 400 }));
  };

  if (contentLength > maxBytes) return refuse('too-large');
  if (!decoded && contentLength > 0) {
    const refusal = blocks.reserve(contentLength);
    if (refusal) return refuse(refusal);
  }
  payload.on('data', onData);
  payload.on('end', onEnd);
  payload.on('error', onError);
  payload.on('close', onClose);
  if (decoded) raw.on('close', onClose);
  payload.resume();
}
