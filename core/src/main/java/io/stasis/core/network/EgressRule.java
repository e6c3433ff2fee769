package io.stasis.core.network;

import io.stasis.core.error.StasisException;

/** One entry of an allow or deny list: a domain pattern or an address range. */
public sealed interface EgressRule {

    record Domain(DomainPattern pattern) implements EgressRule {
        @Override
        public String toString() {
            return pattern.toString();
        }
    }

    record Network(Cidr cidr) implements EgressRule {
        @Override
        public String toString() {
            return cidr.toString();
        }
    }

    /** Parses an entry as the API writes it; {@code invalid_request} naming {@code field} if it is neither. */
    static EgressRule parse(String text, String field) {
        if (text == null || text.isBlank()) throw StasisException.invalid(field, "must not be empty");
        String trimmed = text.strip();
        return Cidr.looksLikeCidr(trimmed) ? new Network(Cidr.parse(trimmed, field)) : new Domain(DomainPattern.parse(trimmed, field));
    }
}
