package io.stasis.cli;

import io.stasis.sdk.EgressPolicy;
import io.stasis.sdk.NetworkPolicy;
import java.util.ArrayList;
import java.util.List;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.Option;
import picocli.CommandLine.TypeConversionException;

/**
 * The {@code --allow} and {@code --deny} lists shared by {@code create} and {@code network set}
 * (comma-separated, repeatable, empty items skipped). Each command names its own default option
 * ({@code --egress-default}, {@code --default}), converted by {@link DefaultConverter}.
 */
final class EgressOptions {
    @Option(names = "--allow", paramLabel = "ENTRY", split = ",",
            description = "Domains (example.com, *.example.com), IPv4 addresses and CIDRs the sandbox may reach; comma-separated, repeatable.")
    List<String> allow = new ArrayList<>();

    @Option(names = "--deny", paramLabel = "ENTRY", split = ",",
            description = "Entries it may not reach, whatever --allow says; comma-separated, repeatable.")
    List<String> deny = new ArrayList<>();

    /** True when neither list was given. */
    boolean isEmpty() {
        return allow.isEmpty() && deny.isEmpty();
    }

    /** The whole policy: {@code defaultAction} (deny when null) and the lists. */
    NetworkPolicy policy(EgressPolicy.Action defaultAction) {
        return NetworkPolicy.builder()
                .defaultAction(defaultAction == null ? EgressPolicy.Action.DENY : defaultAction)
                .allow(nonBlank(allow))
                .deny(nonBlank(deny))
                .build();
    }

    private static List<String> nonBlank(List<String> items) {
        return items.stream().filter(item -> !item.isBlank()).toList();
    }

    /** {@code allow} or {@code deny}. */
    static final class DefaultConverter implements ITypeConverter<EgressPolicy.Action> {
        @Override
        public EgressPolicy.Action convert(String value) {
            try {
                return EgressPolicy.Action.fromWire(value);
            } catch (IllegalArgumentException e) {
                throw new TypeConversionException("must be 'allow' or 'deny', was '" + value + "'");
            }
        }
    }
}
