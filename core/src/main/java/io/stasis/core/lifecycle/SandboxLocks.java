package io.stasis.core.lifecycle;

import io.stasis.core.concurrent.KeyedLock;
import io.stasis.core.error.StasisException;
import io.stasis.core.sandbox.SandboxId;
import io.stasis.core.tenant.TenantId;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.BiFunction;
import java.util.function.Supplier;

/**
 * One read/write lock per sandbox, and one claim per sandbox name being given. State changes
 * (pause, hibernate, delete...) take a sandbox's lock exclusively; calls that use a sandbox as it
 * is (starting a process) share it, so a state change never runs under a process being started.
 * A name is claimed by every path that makes a sandbox (create, fork, restore) from the check that
 * it is free until the record is in the catalog, so two of them never both pass the check.
 */
public final class SandboxLocks {
    private final KeyedLock<SandboxId> sandboxes = new KeyedLock<>();
    private final KeyedLock<TenantName> names = new KeyedLock<>();

    private record TenantName(TenantId tenant, String name) {
    }

    /** Names claimed until closed, by the thread that claimed them. */
    public interface NameClaim extends AutoCloseable {
        @Override
        void close();
    }

    public <T> T exclusive(SandboxId id, Supplier<T> action) {
        return sandboxes.exclusive(id, action);
    }

    public <T> T shared(SandboxId id, Supplier<T> action) {
        return sandboxes.shared(id, action);
    }

    /**
     * Claims the tenant's names, all or none: {@code name_taken} for the first that another call is
     * giving now or that {@code existing} finds a sandbox of (the catalog's {@code findByName}).
     */
    public NameClaim claimNames(TenantId tenant, List<String> wanted, BiFunction<TenantId, String, ? extends Optional<?>> existing) {
        var held = new ArrayList<KeyedLock.Held>();
        NameClaim claim = () -> held.reversed().forEach(KeyedLock.Held::close);
        try {
            for (String name : wanted) {
                var hold = names.tryExclusive(new TenantName(tenant, name)).orElseThrow(() -> StasisException.nameTaken(name));
                held.add(hold);
                if (existing.apply(tenant, name).isPresent()) throw StasisException.nameTaken(name);
            }
            return claim;
        } catch (RuntimeException e) {
            claim.close();
            throw e;
        }
    }

    /** Sandboxes and names held or waited for now (a test's check that nothing stays). */
    int keysInUse() {
        return sandboxes.keysInUse() + names.keysInUse();
    }
}
