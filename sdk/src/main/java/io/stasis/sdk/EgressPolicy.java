package io.stasis.sdk;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.annotation.JsonValue;
import java.util.List;
import java.util.Locale;

/**
 * Where a sandbox may connect: the {@code egress} object of a {@link NetworkPolicy}. Deny entries
 * win over allow entries, which win over the default. An entry is a domain ({@code example.com}
 * matches that name only, {@code *.example.com} every name below it but not {@code example.com}
 * itself), an IPv4 address ({@code 192.0.2.7}) or an IPv4 CIDR network ({@code 10.0.0.0/8}).
 * Build one with {@link NetworkPolicy#builder()}.
 *
 * @param defaultAction what happens to destinations no entry names ({@code "default"} on the
 *                      wire; {@link Action#DENY} when absent)
 * @param allow         entries the sandbox may reach
 * @param deny          entries it may not reach, whatever {@code allow} says
 */
public record EgressPolicy(@JsonProperty("default") Action defaultAction, List<String> allow, List<String> deny) {
    public EgressPolicy {
        if (defaultAction == null) defaultAction = Action.DENY;
        allow = allow == null ? List.of() : List.copyOf(allow);
        deny = deny == null ? List.of() : List.copyOf(deny);
    }

    /** What the policy does with a destination. */
    public enum Action {
        ALLOW, DENY;

        @JsonValue
        public String wireName() {
            return name().toLowerCase(Locale.ROOT);
        }

        /** {@code allow} or {@code deny}. */
        @JsonCreator
        public static Action fromWire(String value) {
            return switch (value) {
                case "allow" -> ALLOW;
                case "deny" -> DENY;
                case null, default -> throw new IllegalArgumentException("an egress default is \"allow\" or \"deny\", was " + value);
            };
        }
    }
}
