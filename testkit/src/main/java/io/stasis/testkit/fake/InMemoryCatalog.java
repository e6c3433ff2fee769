package io.stasis.testkit.fake;

import io.stasis.core.auth.ApiKey;
import io.stasis.core.auth.ScopedToken;
import io.stasis.core.auth.TokenScope;
import io.stasis.core.bucket.SandboxBucket;
import io.stasis.core.bucket.SandboxBuckets;
import io.stasis.core.checkpoint.Checkpoint;
import io.stasis.core.checkpoint.CheckpointId;
import io.stasis.core.checkpoint.CheckpointUpload;
import io.stasis.core.checkpoint.DurableImage;
import io.stasis.core.error.ErrorCode;
import io.stasis.core.error.StasisException;
import io.stasis.core.events.Event;
import io.stasis.core.journal.Operation;
import io.stasis.core.network.SandboxNetwork;
import io.stasis.core.preview.Preview;
import io.stasis.core.preview.PreviewId;
import io.stasis.core.node.Node;
import io.stasis.core.node.NodeCapacity;
import io.stasis.core.sandbox.Page;
import io.stasis.core.sandbox.Sandbox;
import io.stasis.core.sandbox.SandboxId;
import io.stasis.core.sandbox.SandboxQuery;
import io.stasis.core.sandbox.SandboxState;
import io.stasis.core.secret.SealedSecret;
import io.stasis.core.spi.BucketCatalog;
import io.stasis.core.spi.Catalog;
import io.stasis.core.spi.VolumeCatalog;
import io.stasis.core.tenant.QuotaHold;
import io.stasis.core.tenant.Tenant;
import io.stasis.core.tenant.TenantId;
import io.stasis.core.tenant.TenantQuota;
import io.stasis.core.tenant.TenantUsage;
import io.stasis.core.volume.Volume;
import io.stasis.core.volume.VolumeId;
import io.stasis.core.volume.VolumeMount;
import io.stasis.core.volume.VolumeSnapshot;
import io.stasis.core.volume.VolumeSnapshotId;
import io.stasis.core.volume.VolumeSync;
import io.stasis.core.volume.VolumeSyncId;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Predicate;
import java.util.function.Supplier;
import java.util.stream.Stream;

/**
 * The catalog in maps, for tests of core's services: it passes the same contract suites as
 * {@code SqlCatalog} (testkit's {@code CatalogSuite}, {@code CheckpointCatalogSuite},
 * {@code EventCatalogSuite}, {@code TenantCatalogSuite}, {@code VolumeCatalogSuite} and
 * {@code BucketCatalogSuite}), so it orders every list, refuses every clash and cascades every
 * delete as SQLite does, and throws the same error codes. Records are immutable, so the maps hold
 * them as given.
 *
 * <p>Thread-safe: every call runs under one {@link ReentrantLock} (not {@code synchronized}, as
 * the services call from virtual threads), so each call is atomic, as each of SQLite's
 * transactions is. A call that fails changes nothing: every check comes before the first change.
 * What SQLite adds that a fake need not: durability, and the event table's retention.
 */
public final class InMemoryCatalog implements Catalog, VolumeCatalog, BucketCatalog {
    /** SQLite's {@code ORDER BY created_at, id}, for every record listed oldest first. */
    private static final Comparator<Sandbox> SANDBOX_ORDER = Comparator.comparing(Sandbox::createdAt).thenComparing(Sandbox::id);
    private static final Comparator<Checkpoint> CHECKPOINT_ORDER = Comparator.comparing(Checkpoint::createdAt).thenComparing(Checkpoint::id);
    private static final Comparator<Volume> VOLUME_ORDER = Comparator.comparing(Volume::createdAt).thenComparing(Volume::id);
    private static final String CURSOR_VERSION = "v1";

    private final ReentrantLock lock = new ReentrantLock();
    private boolean closed;

    private final Map<SandboxId, Sandbox> sandboxes = new HashMap<>();
    private final Map<SandboxId, Operation> operations = new HashMap<>();
    private final Map<SandboxId, SandboxNetwork> networks = new HashMap<>();
    private final Map<CheckpointId, Checkpoint> checkpoints = new HashMap<>();
    private final Map<CheckpointId, Integer> spares = new HashMap<>();
    private final Map<CheckpointId, CheckpointUpload> uploads = new TreeMap<>();
    private final Map<SandboxId, DurableImage> durableImages = new HashMap<>();
    private final List<Event> events = new ArrayList<>();
    private long lastEventId;
    private final Map<String, ApiKey> apiKeys = new HashMap<>();
    private final Map<TenantId, Tenant> tenants = new HashMap<>();
    private final Map<String, ScopedToken> tokens = new HashMap<>();
    private final Map<PreviewId, Preview> previews = new HashMap<>();
    private final Map<TenantId, TreeMap<String, SealedSecret>> secrets = new HashMap<>();
    private final Map<VolumeId, Volume> volumes = new HashMap<>();
    private final Map<SandboxId, List<VolumeMount>> mounts = new HashMap<>();
    private final Map<VolumeSnapshotId, VolumeSnapshot> volumeSnapshots = new HashMap<>();
    private final Map<VolumeSyncId, VolumeSync> volumeSyncs = new HashMap<>();
    private final Map<SandboxId, List<SandboxBucket>> buckets = new HashMap<>();
    private final TreeMap<String, Node> nodes = new TreeMap<>();
    private final Map<String, QuotaHold> holds = new LinkedHashMap<>();
    /** The one node of this catalog, named as SQL's catalog names a node opened without a name. */
    public static final String LOCAL_NODE = "local";

    /** An empty catalog but for the default tenant, made now (to the second, as SQLite's migration stamps it). */
    public InMemoryCatalog() {
        this(Clock.systemUTC());
    }

    public InMemoryCatalog(Clock clock) {
        var now = clock.instant().truncatedTo(ChronoUnit.SECONDS);
        tenants.put(TenantId.DEFAULT, new Tenant(TenantId.DEFAULT, "default", TenantQuota.UNLIMITED, now));
    }

    // --- sandboxes ---

    @Override
    public void insert(Sandbox sandbox) {
        run(() -> {
            if (sandboxes.containsKey(sandbox.id()))
                throw internal("sandbox " + sandbox.id() + " is already in the catalog", "sandbox", sandbox.id().value());
            requireNameFree(sandbox);
            sandboxes.put(sandbox.id(), sandbox);
        });
    }

    @Override
    public void update(Sandbox sandbox) {
        run(() -> replace(sandbox));
    }

    /** {@code sandbox_not_found} if it has no record, {@code name_taken} if its new name is another's; else replaces it. */
    private void replace(Sandbox sandbox) {
        if (!sandboxes.containsKey(sandbox.id())) throw StasisException.sandboxNotFound(sandbox.id().value());
        requireNameFree(sandbox);
        sandboxes.put(sandbox.id(), sandbox);
    }

    /** Names are unique per tenant, whatever the state (one being deleted still holds its name). */
    private void requireNameFree(Sandbox sandbox) {
        if (sandbox.name().isEmpty()) return;
        boolean taken = sandboxes.values().stream().anyMatch(other -> !other.id().equals(sandbox.id())
                && other.tenant().equals(sandbox.tenant()) && other.name().equals(sandbox.name()));
        if (taken) throw StasisException.nameTaken(sandbox.name().get());
    }

    @Override
    public Optional<Sandbox> find(SandboxId id) {
        return call(() -> Optional.ofNullable(sandboxes.get(id)));
    }

    @Override
    public Optional<Sandbox> findByName(TenantId tenant, String name) {
        return call(() -> sandboxes.values().stream()
                .filter(s -> s.tenant().equals(tenant) && s.name().equals(Optional.of(name))).findFirst());
    }

    /** Oldest first by (creation time, id), as SQLite; a page continues strictly after the key its cursor names. */
    @Override
    public Page<Sandbox> list(SandboxQuery query) {
        var after = query.cursor().map(InMemoryCatalog::decodeCursor);
        List<Sandbox> matching = call(() -> sorted(sandboxes.values().stream()
                .filter(s -> !(s.state() instanceof SandboxState.Deleted))
                .filter(s -> query.tenant().map(s.tenant()::equals).orElse(true))
                .filter(s -> query.state().map(s.state().wireName()::equals).orElse(true))
                .filter(s -> s.metadata().entrySet().containsAll(query.metadata().entrySet()))
                .filter(s -> after.map(cursor -> cursor.precedes(s)).orElse(true)), SANDBOX_ORDER));
        if (matching.size() <= query.limit()) return new Page<>(matching, Optional.empty());
        var items = matching.subList(0, query.limit());
        return new Page<>(items, Optional.of(encodeCursor(items.getLast())));
    }

    /** Where a page ended: the sort key of its last sandbox. */
    private record Cursor(Instant createdAt, SandboxId id) {
        boolean precedes(Sandbox s) {
            int byTime = s.createdAt().compareTo(createdAt);
            return byTime > 0 || byTime == 0 && s.id().compareTo(id) > 0;
        }
    }

    /** Opaque to callers: base64url of {@code v1|<created at>|<id>} of a page's last sandbox. */
    private static String encodeCursor(Sandbox last) {
        String plain = CURSOR_VERSION + "|" + last.createdAt() + "|" + last.id().value();
        return Base64.getUrlEncoder().withoutPadding().encodeToString(plain.getBytes(StandardCharsets.UTF_8));
    }

    /** {@code invalid_request} for anything not made by {@link #encodeCursor}. */
    private static Cursor decodeCursor(String cursor) {
        try {
            String[] parts = new String(Base64.getUrlDecoder().decode(cursor), StandardCharsets.UTF_8).split("\\|", -1);
            if (parts.length != 3 || !parts[0].equals(CURSOR_VERSION) || !SandboxId.isValid(parts[2])) throw notACursor();
            return new Cursor(Instant.parse(parts[1]), new SandboxId(parts[2]));
        } catch (IllegalArgumentException | DateTimeParseException e) {
            throw notACursor();
        }
    }

    private static StasisException notACursor() {
        return StasisException.invalid("cursor", "not a cursor returned by a previous page (pass nextCursor unchanged)");
    }

    @Override
    public List<Sandbox> all() {
        return call(() -> sorted(sandboxes.values().stream(), SANDBOX_ORDER));
    }

    @Override
    public List<Sandbox> children(SandboxId parent) {
        return call(() -> sorted(sandboxes.values().stream().filter(s -> s.parentId().equals(Optional.of(parent))), SANDBOX_ORDER));
    }

    /** Forgets the sandbox with everything that is only about it; its checkpoints, their uploads and its events stay. */
    @Override
    public void delete(SandboxId id) {
        run(() -> {
            sandboxes.remove(id);
            operations.remove(id);
            previews.values().removeIf(p -> p.sandboxId().equals(id));
            networks.remove(id);
            tokens.values().removeIf(t -> t.scope() instanceof TokenScope.Sandbox(SandboxId scoped) && scoped.equals(id));
            mounts.remove(id);
            buckets.remove(id);
            durableImages.remove(id);
        });
    }

    // --- operations ---

    @Override
    public void beginOperation(Operation operation) {
        run(() -> operations.put(operation.sandbox(), operation));
    }

    /** As SQLite's transaction: if the outcome cannot be recorded, the operation stays too. */
    @Override
    public void completeOperation(Sandbox outcome) {
        run(() -> {
            replace(outcome);
            operations.remove(outcome.id());
        });
    }

    @Override
    public void abandonOperation(SandboxId sandbox) {
        run(() -> operations.remove(sandbox));
    }

    @Override
    public List<Operation> pendingOperations() {
        return call(() -> sorted(operations.values().stream(), Comparator.comparing(Operation::startedAt).thenComparing(Operation::sandbox)));
    }

    // --- networks ---

    @Override
    public void insertNetwork(SandboxNetwork network) {
        run(() -> {
            if (networks.containsKey(network.id()) || networks.values().stream().anyMatch(n -> n.slot() == network.slot()))
                throw internal("network slot " + network.slot() + " or sandbox " + network.id() + " is already in the catalog",
                        "sandbox", network.id().value());
            networks.put(network.id(), network);
        });
    }

    /** Replaces the policy only: the slot stays the recorded one. */
    @Override
    public void updateNetwork(SandboxNetwork network) {
        run(() -> networks.computeIfPresent(network.id(), (id, recorded) -> recorded.withPolicy(network.policy())));
    }

    @Override
    public Optional<SandboxNetwork> findNetwork(SandboxId id) {
        return call(() -> Optional.ofNullable(networks.get(id)));
    }

    @Override
    public List<SandboxNetwork> allNetworks() {
        return call(() -> sorted(networks.values().stream(), Comparator.comparingInt(SandboxNetwork::slot)));
    }

    @Override
    public void deleteNetwork(SandboxId id) {
        run(() -> networks.remove(id));
    }

    // --- checkpoints ---

    @Override
    public void insertCheckpoint(Checkpoint checkpoint) {
        run(() -> {
            if (checkpoints.containsKey(checkpoint.id()))
                throw internal("checkpoint " + checkpoint.id() + " is already in the catalog", "checkpoint", checkpoint.id().value());
            checkpoints.put(checkpoint.id(), checkpoint);
        });
    }

    @Override
    public Optional<Checkpoint> findCheckpoint(CheckpointId id) {
        return call(() -> Optional.ofNullable(checkpoints.get(id)));
    }

    @Override
    public List<Checkpoint> checkpointsOf(SandboxId sandbox) {
        return call(() -> sorted(checkpoints.values().stream().filter(c -> c.sandboxId().equals(sandbox)), CHECKPOINT_ORDER));
    }

    @Override
    public List<Checkpoint> allCheckpoints() {
        return call(() -> sorted(checkpoints.values().stream(), CHECKPOINT_ORDER));
    }

    @Override
    public List<Checkpoint> checkpointsOfTenant(TenantId tenant) {
        return call(() -> sorted(checkpoints.values().stream().filter(c -> {
            var sandbox = sandboxes.get(c.sandboxId());
            return sandbox != null && sandbox.tenant().equals(tenant);
        }), CHECKPOINT_ORDER));
    }

    // --- nodes: one node holds every record, as on a SQLite file ---

    @Override
    public String localNode() {
        return LOCAL_NODE;
    }

    @Override
    public void putNode(Node node) {
        call(() -> nodes.put(node.name(), node));
    }

    @Override
    public boolean renewNode(String name, Instant leaseUntil, NodeCapacity capacity) {
        return call(() -> {
            var node = nodes.get(name);
            if (node == null) return false;
            nodes.put(name, new Node(name, node.advertiseUrl(), node.previewUrl(), node.startedAt(), leaseUntil, capacity, node.draining()));
            return true;
        });
    }

    @Override
    public boolean setDraining(String name, boolean draining) {
        return call(() -> {
            var node = nodes.get(name);
            if (node == null) return false;
            nodes.put(name, new Node(name, node.advertiseUrl(), node.previewUrl(), node.startedAt(), node.leaseUntil(), node.capacity(), draining));
            return true;
        });
    }

    @Override
    public List<Node> nodes() {
        return call(() -> List.copyOf(nodes.values()));
    }

    @Override
    public Optional<String> nodeOf(SandboxId sandbox) {
        return call(() -> sandboxes.containsKey(sandbox) ? Optional.of(LOCAL_NODE) : Optional.<String>empty());
    }

    @Override
    public Optional<String> nodeOfCheckpoint(CheckpointId checkpoint) {
        return call(() -> checkpoints.containsKey(checkpoint) ? Optional.of(LOCAL_NODE) : Optional.<String>empty());
    }

    @Override
    public Optional<String> nodeOfVolume(VolumeId volume) {
        return call(() -> volumes.containsKey(volume) ? Optional.of(LOCAL_NODE) : Optional.<String>empty());
    }

    /** One node holds everything here: no other node's sandboxes to list. */
    @Override
    public List<SandboxId> sandboxesOfNode(String node) {
        return call(() -> node.equals(LOCAL_NODE)
                ? sorted(sandboxes.values().stream().filter(s -> !(s.state() instanceof SandboxState.Deleted)), SANDBOX_ORDER).stream()
                        .map(Sandbox::id).toList()
                : List.<SandboxId>of());
    }

    /** One node holds everything here: nothing to adopt from another. */
    @Override
    public boolean adoptSandbox(SandboxId sandbox, String fromNode, java.util.OptionalInt slot, Optional<Sandbox> asHibernated) {
        return false;
    }

    @Override
    public Map<String, Integer> sandboxCountsByNode() {
        return call(() -> {
            int count = (int) sandboxes.values().stream().filter(s -> !(s.state() instanceof SandboxState.Deleted)).count();
            return count == 0 ? Map.<String, Integer>of() : Map.of(LOCAL_NODE, count);
        });
    }

    /** Its spares go with it; its upload stays (the service removes that itself). */
    @Override
    public void deleteCheckpoint(CheckpointId id) {
        run(() -> {
            checkpoints.remove(id);
            spares.remove(id);
        });
    }

    /** {@code internal} for a negative count of a recorded checkpoint (SQLite's CHECK constraint). */
    @Override
    public void setCheckpointSpares(CheckpointId id, int count) {
        run(() -> {
            if (!checkpoints.containsKey(id)) return;
            if (count < 0) throw internal("spares must not be negative, was " + count, "checkpoint", id.value());
            if (count == 0) spares.remove(id);
            else spares.put(id, count);
        });
    }

    /** Oldest checkpoint first. */
    @Override
    public Map<CheckpointId, Integer> checkpointSpares() {
        return call(() -> {
            var out = new LinkedHashMap<CheckpointId, Integer>();
            for (var c : sorted(checkpoints.values().stream().filter(c -> spares.containsKey(c.id())), CHECKPOINT_ORDER))
                out.put(c.id(), spares.get(c.id()));
            return out;
        });
    }

    /** {@code internal} for a durable upload without a root stream (SQLite's CHECK constraint). */
    @Override
    public void recordUpload(CheckpointUpload upload) {
        run(() -> {
            if (upload.durable() && upload.root().isEmpty())
                throw internal("a durable upload needs its root stream", "checkpoint", upload.checkpoint().value());
            uploads.put(upload.checkpoint(), upload);
        });
    }

    @Override
    public Optional<CheckpointUpload> findUpload(CheckpointId id) {
        return call(() -> Optional.ofNullable(uploads.get(id)));
    }

    @Override
    public void recordDurableImage(SandboxId sandbox, DurableImage image) {
        run(() -> durableImages.merge(sandbox, image, (recorded, offered) -> recorded.takenAt().isAfter(offered.takenAt()) ? recorded : offered));
    }

    @Override
    public Optional<DurableImage> durableImage(SandboxId sandbox) {
        return call(() -> Optional.ofNullable(durableImages.get(sandbox)));
    }

    /** By checkpoint id. */
    @Override
    public List<CheckpointUpload> allUploads() {
        return call(() -> List.copyOf(uploads.values()));
    }

    @Override
    public void deleteUpload(CheckpointId id) {
        run(() -> uploads.remove(id));
    }

    // --- events ---

    /** The id passed in is ignored; the data comes back as SQLite's JSON gives it back (see {@link EventData}). */
    @Override
    public Event appendEvent(Event event) {
        var data = EventData.normalize(event.data()); // refuses bad data before anything is stored
        return call(() -> {
            var stored = new Event(++lastEventId, event.at(), event.type(), event.sandbox(), data, event.tenant());
            events.add(stored);
            return stored;
        });
    }

    @Override
    public List<Event> eventsAfter(long afterId, Optional<SandboxId> sandbox, Optional<TenantId> tenant, int limit) {
        if (limit < 0) throw new IllegalArgumentException("limit must not be negative, was " + limit);
        return call(() -> events.stream()
                .filter(e -> e.id() > afterId)
                .filter(e -> sandbox.isEmpty() || e.sandbox().equals(sandbox))
                .filter(e -> tenant.map(e::visibleTo).orElse(true))
                .limit(limit)
                .toList());
    }

    @Override
    public long lastEventId() {
        return call(() -> events.isEmpty() ? 0L : events.getLast().id());
    }

    // --- keys ---

    @Override
    public void insertApiKey(ApiKey key) {
        run(() -> {
            if (apiKeys.containsKey(key.id()) || apiKeys.values().stream().anyMatch(k -> k.secretHash().equals(key.secretHash())))
                throw internal("API key " + key.id() + " collides with a stored key (same id or secret)", "key", key.id());
            apiKeys.put(key.id(), key);
        });
    }

    @Override
    public Optional<ApiKey> findApiKeyByHash(String secretHash) {
        return call(() -> apiKeys.values().stream().filter(k -> k.secretHash().equals(secretHash)).findFirst());
    }

    @Override
    public boolean hasRootKey() {
        return call(() -> apiKeys.values().stream().anyMatch(ApiKey::root));
    }

    @Override
    public List<ApiKey> apiKeysOf(TenantId tenant) {
        return call(() -> sorted(apiKeys.values().stream().filter(k -> k.tenant().equals(tenant)),
                Comparator.comparing(ApiKey::createdAt).thenComparing(ApiKey::id)));
    }

    @Override
    public void deleteApiKey(String id) {
        run(() -> apiKeys.remove(id));
    }

    // --- tenants ---

    @Override
    public void insertTenant(Tenant tenant) {
        run(() -> {
            if (tenants.containsKey(tenant.id()))
                throw internal("tenant " + tenant.id() + " is already in the catalog", "tenant", tenant.id().value());
            if (tenants.values().stream().anyMatch(t -> t.name().equals(tenant.name())))
                throw new StasisException(ErrorCode.NAME_TAKEN, "a tenant named '" + tenant.name() + "' exists", Map.of("name", tenant.name()));
            tenants.put(tenant.id(), tenant);
        });
    }

    /** Replaces the quota only (the name and creation time stay); {@code internal} for a tenant with no record. */
    @Override
    public void updateTenant(Tenant tenant) {
        run(() -> {
            var recorded = tenants.get(tenant.id());
            if (recorded == null) throw internal("no tenant record " + tenant.id(), "tenant", tenant.id().value());
            tenants.put(tenant.id(), recorded.withQuota(tenant.quota()));
        });
    }

    @Override
    public Optional<Tenant> findTenant(TenantId id) {
        return call(() -> Optional.ofNullable(tenants.get(id)));
    }

    @Override
    public List<Tenant> allTenants() {
        return call(() -> sorted(tenants.values().stream(),
                Comparator.comparing(Tenant::createdAt).thenComparing(t -> t.id().value())));
    }

    /** Also true for a tenant with no record (nothing of it is left). */
    @Override
    public boolean deleteTenantIfEmpty(TenantId id) {
        return call(() -> {
            if (id.equals(TenantId.DEFAULT)) return false; // it holds the root key
            if (sandboxes.values().stream().anyMatch(s -> s.tenant().equals(id))) return false;
            if (volumes.values().stream().anyMatch(v -> v.tenant().equals(id))) return false;
            apiKeys.values().removeIf(k -> k.tenant().equals(id));
            tokens.values().removeIf(t -> t.tenant().equals(id));
            secrets.remove(id);
            tenants.remove(id);
            return true;
        });
    }

    /** Running, paused and standby sandboxes hold memory; every sandbox not being deleted and every volume hold disk. */
    @Override
    public TenantUsage usage(TenantId tenant) {
        return call(() -> {
            var held = sandboxLoad(s -> s.tenant().equals(tenant));
            long volumeMb = volumes.values().stream().filter(v -> v.tenant().equals(tenant)).mapToLong(Volume::sizeMb).sum();
            return held.plus(new TenantUsage(0, 0, volumeMb));
        });
    }

    /** The one node's load and the tenant's usage, as the SQL catalog counts them, under the one lock that serialises every call. */
    @Override
    public void hold(QuotaHold hold, QuotaHold.Admission admission) {
        run(() -> {
            var tenantHeld = usage(hold.tenant()).plus(heldBy(h -> h.tenant().equals(hold.tenant())));
            admission.check(tenantHeld, localLoad());
            holds.put(hold.id(), hold);
        });
    }

    @Override
    public void releaseHold(String id) {
        run(() -> holds.remove(id));
    }

    @Override
    public int releaseHoldsOf(String node) {
        return call(() -> {
            if (!node.equals(LOCAL_NODE)) return 0;
            int count = holds.size();
            holds.clear();
            return count;
        });
    }

    @Override
    public Map<String, TenantUsage> nodeLoads() {
        return call(() -> {
            var load = localLoad();
            boolean any = holds.size() > 0 || sandboxes.values().stream().anyMatch(s -> !(s.state() instanceof SandboxState.Deleted));
            return any ? Map.of(LOCAL_NODE, load) : Map.<String, TenantUsage>of();
        });
    }

    private TenantUsage localLoad() {
        return sandboxLoad(s -> true).plus(heldBy(h -> true));
    }

    private TenantUsage sandboxLoad(Predicate<Sandbox> which) {
        int running = 0;
        long memoryMb = 0;
        long diskMb = 0;
        for (var s : sandboxes.values()) {
            if (!which.test(s) || s.state() instanceof SandboxState.Deleted) continue;
            if (holdsProcesses(s.state())) {
                running++;
                memoryMb += s.resources().memoryMb() + (long) buckets.getOrDefault(s.id(), List.of()).size() * SandboxBuckets.DAEMON_MEMORY_MB;
            }
            diskMb += s.resources().diskMb();
        }
        return new TenantUsage(running, memoryMb, diskMb);
    }

    private TenantUsage heldBy(Predicate<QuotaHold> which) {
        return holds.values().stream().filter(which).map(QuotaHold::demand).reduce(TenantUsage.NONE, TenantUsage::plus);
    }

    private static boolean holdsProcesses(SandboxState state) {
        return state.equals(SandboxState.RUNNING) || state.equals(SandboxState.PAUSED) || state.equals(SandboxState.STANDBY);
    }

    // --- scoped tokens ---

    @Override
    public void insertToken(ScopedToken token) {
        run(() -> {
            if (tokens.containsKey(token.id()) || tokens.values().stream().anyMatch(t -> t.secretHash().equals(token.secretHash())))
                throw internal("token " + token.id() + " collides with a stored token (same id or secret)", "token", token.id());
            tokens.put(token.id(), token);
        });
    }

    @Override
    public Optional<ScopedToken> findTokenByHash(String secretHash) {
        return call(() -> tokens.values().stream().filter(t -> t.secretHash().equals(secretHash)).findFirst());
    }

    @Override
    public Optional<ScopedToken> findToken(String id) {
        return call(() -> Optional.ofNullable(tokens.get(id)));
    }

    @Override
    public List<ScopedToken> tokensOf(TenantId tenant) {
        return call(() -> sorted(tokens.values().stream().filter(t -> t.tenant().equals(tenant)),
                Comparator.comparing(ScopedToken::createdAt).thenComparing(ScopedToken::id)));
    }

    @Override
    public void deleteToken(String id) {
        run(() -> tokens.remove(id));
    }

    @Override
    public void deleteTokensExpiredBefore(Instant now) {
        run(() -> tokens.values().removeIf(t -> t.expiresAt().isBefore(now)));
    }

    // --- previews ---

    @Override
    public boolean insertPreview(Preview preview) {
        return call(() -> {
            var sandbox = sandboxes.get(preview.sandboxId());
            if (sandbox == null || sandbox.state() instanceof SandboxState.Deleted) return false;
            if (previews.containsKey(preview.id()))
                throw internal("preview " + preview.id() + " is already in the catalog", "preview", preview.id().value());
            previews.put(preview.id(), preview);
            return true;
        });
    }

    @Override
    public Optional<Preview> findPreview(PreviewId id) {
        return call(() -> Optional.ofNullable(previews.get(id)));
    }

    @Override
    public List<Preview> previewsOf(SandboxId sandbox) {
        return call(() -> sorted(previews.values().stream().filter(p -> p.sandboxId().equals(sandbox)),
                Comparator.comparing(Preview::createdAt).thenComparing(Preview::id)));
    }

    @Override
    public void deletePreview(PreviewId id) {
        run(() -> previews.remove(id));
    }

    // --- secrets ---

    @Override
    public boolean putSecret(TenantId tenant, SealedSecret secret) {
        return call(() -> secrets.computeIfAbsent(tenant, t -> new TreeMap<>()).put(secret.name(), secret) == null);
    }

    @Override
    public Optional<SealedSecret> findSecret(TenantId tenant, String name) {
        return call(() -> Optional.ofNullable(secrets.getOrDefault(tenant, new TreeMap<>()).get(name)));
    }

    /** By name. */
    @Override
    public List<SealedSecret> secretsOf(TenantId tenant) {
        return call(() -> List.copyOf(secrets.getOrDefault(tenant, new TreeMap<>()).values()));
    }

    @Override
    public boolean deleteSecret(TenantId tenant, String name) {
        return call(() -> {
            var ofTenant = secrets.get(tenant);
            return ofTenant != null && ofTenant.remove(name) != null;
        });
    }

    // --- volumes ---

    @Override
    public void insertVolume(Volume volume) {
        run(() -> {
            if (volumes.containsKey(volume.id()))
                throw internal("volume " + volume.id() + " is already in the catalog", "volume", volume.id().value());
            if (volumes.values().stream().anyMatch(v -> v.tenant().equals(volume.tenant()) && v.name().equals(volume.name())))
                throw StasisException.nameTaken(volume.name());
            volumes.put(volume.id(), volume);
        });
    }

    @Override
    public Optional<Volume> findVolume(VolumeId id) {
        return call(() -> Optional.ofNullable(volumes.get(id)));
    }

    @Override
    public Optional<Volume> findVolumeByName(TenantId tenant, String name) {
        return call(() -> volumes.values().stream().filter(v -> v.tenant().equals(tenant) && v.name().equals(name)).findFirst());
    }

    @Override
    public List<Volume> volumesOf(TenantId tenant) {
        return call(() -> sorted(volumes.values().stream().filter(v -> v.tenant().equals(tenant)), VOLUME_ORDER));
    }

    @Override
    public List<Volume> allVolumes() {
        return call(() -> sorted(volumes.values().stream(), VOLUME_ORDER));
    }

    /** Also takes every sandbox's mount of it (the others keep their order) and the tokens scoped to it. */
    @Override
    public void deleteVolume(VolumeId id) {
        run(() -> {
            volumes.remove(id);
            volumeSnapshots.values().removeIf(s -> s.volume().equals(id));
            volumeSyncs.values().removeIf(s -> s.volume().equals(id));
            mounts.replaceAll((sandbox, list) -> list.stream().filter(m -> !m.volume().equals(id)).toList());
            mounts.values().removeIf(List::isEmpty);
            tokens.values().removeIf(t -> t.scope() instanceof TokenScope.Volume(String scoped) && scoped.equals(id.value()));
        });
    }

    @Override
    public void setMounts(SandboxId sandbox, List<VolumeMount> newMounts) {
        run(() -> replaceList(this.mounts, sandbox, newMounts));
    }

    @Override
    public List<VolumeMount> mountsOf(SandboxId sandbox) {
        return call(() -> mounts.getOrDefault(sandbox, List.of()));
    }

    /** Sandboxes with a record and not being deleted, oldest first, then in mount order. */
    @Override
    public List<Mounter> mountersOf(VolumeId volume) {
        return call(() -> {
            var out = new ArrayList<Mounter>();
            for (var s : sorted(sandboxes.values().stream().filter(s -> !(s.state() instanceof SandboxState.Deleted)), SANDBOX_ORDER)) {
                for (var m : mounts.getOrDefault(s.id(), List.of()))
                    if (m.volume().equals(volume)) out.add(new Mounter(s.id(), m.path(), m.readOnly()));
            }
            return out;
        });
    }

    @Override
    public void insertVolumeSnapshot(VolumeSnapshot snapshot) {
        run(() -> insertOnce(volumeSnapshots, snapshot.id(), snapshot, "volume snapshot " + snapshot.id()));
    }

    @Override
    public Optional<VolumeSnapshot> findVolumeSnapshot(VolumeSnapshotId id) {
        return call(() -> Optional.ofNullable(volumeSnapshots.get(id)));
    }

    @Override
    public List<VolumeSnapshot> volumeSnapshotsOf(VolumeId volume) {
        return call(() -> sorted(volumeSnapshots.values().stream().filter(s -> s.volume().equals(volume)),
                Comparator.comparing(VolumeSnapshot::createdAt).thenComparing(VolumeSnapshot::id)));
    }

    @Override
    public void deleteVolumeSnapshot(VolumeSnapshotId id) {
        run(() -> volumeSnapshots.remove(id));
    }

    @Override
    public void insertVolumeSync(VolumeSync sync) {
        run(() -> insertOnce(volumeSyncs, sync.id(), sync, "volume sync " + sync.id()));
    }

    @Override
    public Optional<VolumeSync> findVolumeSync(VolumeSyncId id) {
        return call(() -> Optional.ofNullable(volumeSyncs.get(id)));
    }

    @Override
    public List<VolumeSync> volumeSyncsOf(VolumeId volume) {
        return call(() -> sorted(volumeSyncs.values().stream().filter(s -> s.volume().equals(volume)),
                Comparator.comparing(VolumeSync::createdAt).thenComparing(VolumeSync::id)));
    }

    @Override
    public void deleteVolumeSync(VolumeSyncId id) {
        run(() -> volumeSyncs.remove(id));
    }

    // --- bucket mounts ---

    @Override
    public void setBuckets(SandboxId sandbox, List<SandboxBucket> newBuckets) {
        run(() -> replaceList(buckets, sandbox, newBuckets));
    }

    @Override
    public List<SandboxBucket> bucketsOf(SandboxId sandbox) {
        return call(() -> buckets.getOrDefault(sandbox, List.of()));
    }

    // --- the rest ---

    /** Idempotent; later calls fail with {@code internal}, as SQLite's do. */
    @Override
    public void close() {
        lock.lock();
        try {
            closed = true;
        } finally {
            lock.unlock();
        }
    }

    @Override
    public String toString() {
        return "InMemoryCatalog";
    }

    private static <K, V> void insertOnce(Map<K, V> map, K id, V value, String what) {
        if (map.containsKey(id)) throw internal(what + " is already in the catalog", "id", String.valueOf(id));
        map.put(id, value);
    }

    private static <V> void replaceList(Map<SandboxId, List<V>> map, SandboxId sandbox, List<V> values) {
        if (values.isEmpty()) map.remove(sandbox);
        else map.put(sandbox, List.copyOf(values));
    }

    private static <T> List<T> sorted(Stream<T> records, Comparator<? super T> order) {
        return records.sorted(order).toList();
    }

    private static StasisException internal(String message, String detail, String value) {
        return new StasisException(ErrorCode.INTERNAL, message, Map.of(detail, value));
    }

    /** Runs {@code work} alone on the maps and returns what it gives. */
    private <T> T call(Supplier<T> work) {
        lock.lock();
        try {
            if (closed) throw new StasisException(ErrorCode.INTERNAL, "the catalog " + this + " is closed");
            return work.get();
        } finally {
            lock.unlock();
        }
    }

    /** Runs {@code work} alone on the maps. */
    private void run(Runnable work) {
        call(() -> {
            work.run();
            return null;
        });
    }
}
