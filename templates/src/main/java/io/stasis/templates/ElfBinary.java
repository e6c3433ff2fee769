package io.stasis.templates;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Path;

/**
 * Reads just enough of an ELF file to tell whether it is statically linked: a dynamically linked
 * program names its loader in a PT_INTERP program header. A static binary is what a template
 * with no libraries of its own needs.
 */
final class ElfBinary {
    private static final int PT_INTERP = 3;

    private ElfBinary() {
    }

    /** True for a 64-bit little-endian ELF executable without a program interpreter. */
    static boolean isStatic(Path file) throws IOException {
        try (var channel = FileChannel.open(file)) {
            ByteBuffer header = ByteBuffer.allocate(64).order(ByteOrder.LITTLE_ENDIAN);
            if (channel.read(header, 0) < 64) return false;
            if (header.getInt(0) != 0x464c457f) return false; // "\x7fELF"
            if (header.get(4) != 2 || header.get(5) != 1) return false; // ELFCLASS64, ELFDATA2LSB
            long phoff = header.getLong(0x20);
            int phentsize = Short.toUnsignedInt(header.getShort(0x36));
            int phnum = Short.toUnsignedInt(header.getShort(0x38));
            if (phentsize < 4 || phnum == 0) return false;
            ByteBuffer entry = ByteBuffer.allocate(4).order(ByteOrder.LITTLE_ENDIAN);
            for (int i = 0; i < phnum; i++) {
                entry.clear();
                if (channel.read(entry, phoff + (long) i * phentsize) < 4) return false;
                if (entry.getInt(0) == PT_INTERP) return false;
            }
            return true;
        }
    }
}
