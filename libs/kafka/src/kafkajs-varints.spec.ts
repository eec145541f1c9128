import { kafkajsWriteUVarInt, PatchedEncoder } from './kafkajs-varints';

type Encoder = { buffer: Buffer; writeVarInt(v: number): Encoder; writeUVarInt(v: number): Encoder };
const Encoder = PatchedEncoder as unknown as new (size?: number) => Encoder;

describe('kafkajs varints written in place', () => {
  const values = [
    0,
    1,
    -1,
    63,
    64,
    -64,
    -65,
    127,
    128,
    255,
    300,
    16383,
    16384,
    2 ** 21,
    2 ** 28,
    2 ** 31 - 1,
    -(2 ** 31),
  ];
  for (let i = 0; i < 2000; i++) values.push(Math.floor((Math.random() - 0.5) * 2 ** 32));

  it('writes the bytes kafkajs wrote, signed and unsigned, one after another in one encoder', () => {
    const ours = new Encoder(1); // small, so that it must grow
    const theirs = new Encoder(1);
    for (const v of values) {
      ours.writeVarInt(v).writeUVarInt(v >>> 0);
      kafkajsWriteUVarInt.call(theirs as never, ((v << 1) ^ (v >> 31)) as never);
      kafkajsWriteUVarInt.call(theirs as never, (v >>> 0) as never);
    }
    expect(ours.buffer.equals(theirs.buffer)).toBe(true);
    expect(ours.buffer.length).toBeGreaterThan(values.length * 2);
  });
});
