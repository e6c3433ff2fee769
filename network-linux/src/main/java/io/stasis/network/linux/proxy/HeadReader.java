package io.stasis.network.linux.proxy;

import java.io.EOFException;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.util.Arrays;
import java.util.Optional;

/** Reads a client's first bytes until its parser finds the head, within a size bound and a deadline. */
final class HeadReader {
    private HeadReader() {
    }

    /**
     * The bytes read (all of them, to be replayed upstream) and the name they presented.
     */
    record ClientHead(byte[] bytes, Optional<String> name) {
    }

    /**
     * @throws MalformedHeadException if the bytes are not a head, or no head fits in {@code protocol.maxHeadBytes()}
     * @throws java.net.SocketTimeoutException if the client is silent past {@code timeout}
     * @throws EOFException if the client closes first
     */
    static ClientHead read(NativeSocket client, Protocol protocol, Duration timeout) throws IOException, MalformedHeadException {
        long deadline = System.nanoTime() + timeout.toNanos();
        HeadParser parser = protocol.parser();
        int max = protocol.maxHeadBytes();
        byte[] buffer = new byte[max];
        int length = 0;
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment chunk = arena.allocate(max);
            while (true) {
                int n = client.read(chunk.asSlice(0, max - length), deadline);
                if (n == 0) throw new EOFException("client closed after " + length + " bytes, before its " + protocol.wireName() + " head ended");
                MemorySegment.copy(chunk, ValueLayout.JAVA_BYTE, 0, buffer, length, n);
                length += n;
                if (parser.parse(buffer, length) instanceof Head.Complete(Optional<String> name))
                    return new ClientHead(Arrays.copyOf(buffer, length), name);
                if (length == max) throw new MalformedHeadException("blocked malformed " + protocol.wireName(), "no head within " + max + " bytes");
            }
        }
    }
}
