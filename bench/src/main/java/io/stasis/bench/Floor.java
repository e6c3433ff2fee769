package io.stasis.bench;

import java.util.List;

/**
 * The raw cost underneath a figure, measured in the same run: the sum of the medians of the
 * floor figures it is made of (e.g. {@code runc run} + {@code btrfs subvolume snapshot}).
 *
 * @param parts names of the floor figures added up
 * @param p50   sum of their medians
 * @param ratio the figure's median divided by {@code p50}
 */
public record Floor(List<String> parts, double p50, double ratio) {
    public Floor {
        parts = List.copyOf(parts);
    }
}
