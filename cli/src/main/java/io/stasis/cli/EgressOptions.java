package io.stasis.cli;

import io.stasis.sdk.EgressPolicy;
import io.stasis.sdk.NetworkPolicy;
import java.util.List;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

/**
 * What {@code create --egress-default/--allow/--deny} and {@code network set} turn into a policy:
 * the default ({@code deny} unless given) and comma-separated lists, empty items skipped.
 */
final class EgressOptions {
    private EgressOptions() {
    }

    static NetworkPolicy policy(EgressPolicy.Action defaultAction, List<String> allow, List<String> deny) {
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
