package io.stasis.network.linux.dns;

import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.util.Optional;

/** DNS over TCP's framing (RFC 1035 section 4.2.2): each message after its length in two bytes. */
final class DnsTcp {

    private DnsTcp() {
    }

    /** The next message, or empty if the peer closed the connection between messages. */
    static Optional<byte[]> read(InputStream stream) throws IOException {
        var in = new DataInputStream(stream);
        int high = in.read();
        if (high < 0) return Optional.empty();
        int low = in.read();
        if (low < 0) throw new EOFException("connection closed inside a message's length");
        byte[] message = new byte[high << 8 | low];
        in.readFully(message);
        return Optional.of(message);
    }

    static void write(OutputStream out, byte[] message) throws IOException {
        if (message.length > 0xffff) throw new IllegalArgumentException("a message of " + message.length + " bytes does not fit TCP framing");
        byte[] frame = new byte[2 + message.length];
        frame[0] = (byte) (message.length >> 8);
        frame[1] = (byte) message.length;
        System.arraycopy(message, 0, frame, 2, message.length);
        out.write(frame); // one write, so the length and message leave in one segment
        out.flush();
    }
}
