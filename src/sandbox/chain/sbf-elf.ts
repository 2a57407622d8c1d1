/**
 * A minimal SBF (Solana BPF, version 0) shared object, written byte by byte: no toolchain is needed to
 * put a tiny program of our own on the local chain. The loader reads sections, not segments: `.text`
 * (its address equal to its file offset, as the loader demands), the dynamic table with its symbols and
 * relocations (each syscall a `call -1` the loader rewrites to the syscall's hash), and `.shstrtab`.
 */

/** One 8-byte instruction: opcode, dst and src registers, a signed 16-bit offset, a 32-bit immediate. */
function insn(opcode: number, dst: number, src: number, offset: number, imm: number): Buffer {
  const bytes = Buffer.alloc(8);
  bytes.writeUInt8(opcode, 0);
  bytes.writeUInt8(((src & 0xf) << 4) | (dst & 0xf), 1);
  bytes.writeInt16LE(offset, 2);
  bytes.writeInt32LE(imm, 4);
  return bytes;
}

/** The few instructions the sandbox's programs use (ALU64, loads and stores, jumps, calls). */
export const sbf = {
  movImm: (dst: number, imm: number) => insn(0xb7, dst, 0, 0, imm),
  movReg: (dst: number, src: number) => insn(0xbf, dst, src, 0, 0),
  addImm: (dst: number, imm: number) => insn(0x07, dst, 0, 0, imm),
  addReg: (dst: number, src: number) => insn(0x0f, dst, src, 0, 0),
  andImm: (dst: number, imm: number) => insn(0x57, dst, 0, 0, imm),
  /** dst = *(u64 *)(src + offset) */
  loadU64: (dst: number, src: number, offset: number) => insn(0x79, dst, src, offset, 0),
  /** dst = *(u8 *)(src + offset) */
  loadU8: (dst: number, src: number, offset: number) => insn(0x71, dst, src, offset, 0),
  /** *(u64 *)(dst + offset) = src */
  storeU64: (dst: number, offset: number, src: number) => insn(0x7b, dst, src, offset, 0),
  /** *(u8 *)(dst + offset) = src */
  storeU8: (dst: number, offset: number, src: number) => insn(0x73, dst, src, offset, 0),
  /** *(u64 *)(dst + offset) = imm (sign-extended) */
  storeImmU64: (dst: number, offset: number, imm: number) => insn(0x7a, dst, 0, offset, imm),
  /** *(u8 *)(dst + offset) = imm */
  storeImmU8: (dst: number, offset: number, imm: number) => insn(0x72, dst, 0, offset, imm),
  /** if dst != imm, skip `offset` instructions */
  jneImm: (dst: number, imm: number, offset: number) => insn(0x55, dst, 0, offset, imm),
  exit: () => insn(0x95, 0, 0, 0, 0),
};

/** A call of a syscall by name, resolved by the loader through a dynamic relocation. */
export interface SyscallSite {
  readonly kind: "syscall";
  readonly name: string;
}

export type Instruction = Buffer | SyscallSite;

const R_BPF_64_32 = 10;
const SHT_PROGBITS = 1;
const SHT_STRTAB = 3;
const SHT_DYNAMIC = 6;
const SHT_DYNSYM = 11;
const SHT_REL = 9;
const SHF_ALLOC = 2;
const SHF_EXECINSTR = 4;
const DT_NULL = 0;
const DT_STRTAB = 5;
const DT_SYMTAB = 6;
const DT_REL = 17;
const DT_RELSZ = 18;
const DT_RELENT = 19;

const align8 = (n: number) => (n + 7) & ~7;

interface Section {
  readonly name: string;
  readonly type: number;
  readonly flags: number;
  readonly data: Buffer;
  readonly entrySize: number;
  readonly link?: number;
}

/** Builds the shared object: the entrypoint is the first instruction of `program`. */
export function buildSbfElf(program: readonly Instruction[]): Buffer {
  const syscalls = [
    ...new Set(program.filter((i): i is SyscallSite => !Buffer.isBuffer(i)).map((s) => s.name)),
  ];
  const text = Buffer.concat(program.map((i) => (Buffer.isBuffer(i) ? i : insn(0x85, 0, 0, 0, -1))));
  const callOffsets = program.flatMap((i, index) =>
    Buffer.isBuffer(i) ? [] : [{ index, symbol: syscalls.indexOf(i.name) + 1 }],
  );

  const dynstr = Buffer.concat([Buffer.from([0]), ...syscalls.map((n) => Buffer.from(`${n}\0`, "utf8"))]);
  const nameOffsets = syscalls.map(
    (_, i) => 1 + syscalls.slice(0, i).reduce((sum, n) => sum + Buffer.byteLength(n) + 1, 0),
  );
  // Symbol 0 is the null symbol; each syscall a global, undefined, untyped symbol.
  const dynsym = Buffer.alloc(24 * (syscalls.length + 1));
  nameOffsets.forEach((offset, i) => {
    dynsym.writeUInt32LE(offset, 24 * (i + 1));
    dynsym.writeUInt8(0x10, 24 * (i + 1) + 4);
  });

  const names = [".text", ".dynamic", ".dynsym", ".dynstr", ".rel.dyn", ".shstrtab"];
  const shstrtab = Buffer.concat([Buffer.from([0]), ...names.map((n) => Buffer.from(`${n}\0`, "utf8"))]);
  const nameOffset = (name: string) => shstrtab.indexOf(Buffer.from(`${name}\0`, "utf8"));

  // Layout: header (64), then each section 8-aligned in this order, then the section headers.
  const headerSize = 64;
  const textOffset = align8(headerSize);
  const dynamicSize = 16 * 6;
  const dynamicOffset = align8(textOffset + text.length);
  const dynsymOffset = align8(dynamicOffset + dynamicSize);
  const dynstrOffset = align8(dynsymOffset + dynsym.length);
  const rel = Buffer.alloc(16 * callOffsets.length);
  const relOffset = align8(dynstrOffset + dynstr.length);
  callOffsets.forEach(({ index, symbol }, i) => {
    rel.writeBigUInt64LE(BigInt(textOffset + 8 * index), 16 * i);
    rel.writeBigUInt64LE((BigInt(symbol) << 32n) | BigInt(R_BPF_64_32), 16 * i + 8);
  });
  const shstrtabOffset = align8(relOffset + rel.length);
  const dynamic = Buffer.alloc(dynamicSize);
  const dynEntries: [number, number][] = [
    [DT_SYMTAB, dynsymOffset],
    [DT_STRTAB, dynstrOffset],
    [DT_REL, relOffset],
    [DT_RELSZ, rel.length],
    [DT_RELENT, 16],
    [DT_NULL, 0],
  ];
  dynEntries.forEach(([tag, value], i) => {
    dynamic.writeBigInt64LE(BigInt(tag), 16 * i);
    dynamic.writeBigUInt64LE(BigInt(value), 16 * i + 8);
  });

  const sections: (Section & { offset: number })[] = [
    {
      name: ".text",
      type: SHT_PROGBITS,
      flags: SHF_ALLOC | SHF_EXECINSTR,
      data: text,
      entrySize: 0,
      offset: textOffset,
    },
    {
      name: ".dynamic",
      type: SHT_DYNAMIC,
      flags: SHF_ALLOC,
      data: dynamic,
      entrySize: 16,
      link: 4,
      offset: dynamicOffset,
    },
    {
      name: ".dynsym",
      type: SHT_DYNSYM,
      flags: SHF_ALLOC,
      data: dynsym,
      entrySize: 24,
      link: 4,
      offset: dynsymOffset,
    },
    { name: ".dynstr", type: SHT_STRTAB, flags: SHF_ALLOC, data: dynstr, entrySize: 0, offset: dynstrOffset },
    {
      name: ".rel.dyn",
      type: SHT_REL,
      flags: SHF_ALLOC,
      data: rel,
      entrySize: 16,
      link: 3,
      offset: relOffset,
    },
    { name: ".shstrtab", type: SHT_STRTAB, flags: 0, data: shstrtab, entrySize: 0, offset: shstrtabOffset },
  ];
  return writeElf(sections, textOffset, align8(shstrtabOffset + shstrtab.length), nameOffset);
}

/** The ELF header, the sections' bytes and their headers (after the null one), in one buffer. */
function writeElf(
  sections: readonly (Section & { offset: number })[],
  textOffset: number,
  sectionHeadersOffset: number,
  nameOffset: (name: string) => number,
): Buffer {
  const sectionCount = sections.length + 1;
  const file = Buffer.alloc(sectionHeadersOffset + 64 * sectionCount);

  // ELF header: 64-bit, little endian, System V ABI, a shared object for the BPF machine, SBF v0.
  Buffer.from([0x7f, 0x45, 0x4c, 0x46, 2, 1, 1, 0]).copy(file, 0);
  file.writeUInt16LE(3, 16); // ET_DYN
  file.writeUInt16LE(247, 18); // EM_BPF
  file.writeUInt32LE(1, 20); // EV_CURRENT
  file.writeBigUInt64LE(BigInt(textOffset), 24); // e_entry: the first instruction
  file.writeBigUInt64LE(0n, 32); // e_phoff: no program headers
  file.writeBigUInt64LE(BigInt(sectionHeadersOffset), 40);
  file.writeUInt32LE(0, 48); // e_flags: SBF v0
  file.writeUInt16LE(64, 52); // e_ehsize
  file.writeUInt16LE(56, 54); // e_phentsize
  file.writeUInt16LE(0, 56); // e_phnum
  file.writeUInt16LE(64, 58); // e_shentsize
  file.writeUInt16LE(sectionCount, 60);
  file.writeUInt16LE(sectionCount - 1, 62); // e_shstrndx: .shstrtab, the last

  sections.forEach((section, i) => {
    section.data.copy(file, section.offset);
    const at = sectionHeadersOffset + 64 * (i + 1); // header 0 is the null section
    file.writeUInt32LE(nameOffset(section.name), at);
    file.writeUInt32LE(section.type, at + 4);
    file.writeBigUInt64LE(BigInt(section.flags), at + 8);
    // Loaded sections sit at an address equal to their file offset.
    file.writeBigUInt64LE(BigInt(section.flags & SHF_ALLOC ? section.offset : 0), at + 16);
    file.writeBigUInt64LE(BigInt(section.offset), at + 24);
    file.writeBigUInt64LE(BigInt(section.data.length), at + 32);
    file.writeUInt32LE(section.link ?? 0, at + 40);
    file.writeBigUInt64LE(8n, at + 48); // sh_addralign
    file.writeBigUInt64LE(BigInt(section.entrySize), at + 56);
  });
  return file;
}
