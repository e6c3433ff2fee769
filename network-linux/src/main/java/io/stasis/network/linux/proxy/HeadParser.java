package io.stasis.network.linux.proxy;

/** Reads the name a client presents from the start of its stream, called again as bytes arrive. */
interface HeadParser {
    /**
     * Parses {@code buffer[0, length)}, all the client has sent so far.
     *
     * @throws MalformedHeadException if those bytes can never become a valid head; nothing else is thrown
     */
    Head parse(byte[] buffer, int length) throws MalformedHeadException;
}
