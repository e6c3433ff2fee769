package io.stasis.network.linux.proxy;

/** What every {@link HeadParser} must do with any input, shared by the parsers' property tests. */
final class HeadParserChecks {
    private HeadParserChecks() {
    }

    /**
     * Feeds every prefix of {@code bytes}, as the reader would after each read, until the parser
     * refuses; any exception but {@link MalformedHeadException} fails the calling property.
     */
    static void onlyEverFailsAsMalformed(HeadParser parser, byte[] bytes) {
        for (int length = 0; length <= bytes.length; length++) {
            try {
                parser.parse(bytes, length);
            } catch (MalformedHeadException expected) {
                return;
            }
        }
    }
}
