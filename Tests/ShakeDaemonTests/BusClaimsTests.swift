import ShakeDaemon
import ShakeServer
import Testing

/// Claims of the sensor on D-Bus, allowed and taken back by the access rule, without a bus.
struct BusClaimsTests {
    static let member = PeerCredentials(pid: 0, uid: 1000, gid: 1000, supplementaryGroups: [27])
    static let stranger = PeerCredentials(pid: 0, uid: 1001, gid: 1001)
    static let root = PeerCredentials(pid: 0, uid: 0, gid: 0)
    /// Users of group 27 may subscribe, and so may claim.
    static let groupRule = PeerRule(users: [], groups: [27])

    @Test func anAllowedCallerClaimsAndReleases() {
        var claims = BusClaims(rule: Self.groupRule)
        #expect(claims.call("Claim", client: ":1.5", peer: Self.member) == .claimed(client: ":1.5", user: 1000))
        #expect(claims.claimants == [":1.5": Self.member])
        #expect(claims.call("Release", client: ":1.5", peer: Self.member) == .released(client: ":1.5"))
        #expect(claims.claimants.isEmpty)
    }

    @Test(arguments: ["Claim", "Release", "Shake", ""])
    func aCallerTheRuleRefusesChangesNothing(method: String) {
        var claims = BusClaims(rule: Self.groupRule)
        _ = claims.call("Claim", client: ":1.5", peer: Self.member)
        #expect(claims.call(method, client: ":1.9", peer: Self.stranger) == .refused)
        #expect(claims.claimants.keys.sorted() == [":1.5"])
    }

    @Test func aMethodThatIsNotTheObjectsIsRefusedEvenForRoot() {
        var claims = BusClaims(rule: .everyone)
        #expect(claims.call("Shake", client: ":1.2", peer: Self.root) == .refused)
        #expect(claims.call("Claim", client: ":1.2", peer: Self.root) == .claimed(client: ":1.2", user: 0))
    }

    @Test func leavingTheBusDropsTheClaimOnce() {
        var claims = BusClaims(rule: .everyone)
        _ = claims.call("Claim", client: ":1.5", peer: Self.member)
        let held = [claims.left(":1.5"), claims.left(":1.5"), claims.left(":1.7")]
        #expect(held == [true, false, false])
        #expect(claims.claimants.isEmpty)
    }

    @Test func aNarrowerRuleTakesBackTheClaimsItNoLongerAllows() {
        var claims = BusClaims(rule: .everyone)
        _ = claims.call("Claim", client: ":1.9", peer: Self.stranger)
        _ = claims.call("Claim", client: ":1.5", peer: Self.member)
        _ = claims.call("Claim", client: ":1.3", peer: Self.stranger)
        _ = claims.call("Claim", client: ":1.1", peer: Self.root)
        #expect(claims.ruleChanged(Self.groupRule) == [":1.3", ":1.9"])
        #expect(claims.claimants.keys.sorted() == [":1.1", ":1.5"])
        // The new rule decides later calls too.
        #expect(claims.call("Claim", client: ":1.9", peer: Self.stranger) == .refused)
        #expect(claims.ruleChanged(.everyone) == [])
    }

    @Test func losingTheBusDropsEveryClaim() {
        var claims = BusClaims(rule: .everyone)
        _ = claims.call("Claim", client: ":1.5", peer: Self.member)
        _ = claims.call("Claim", client: ":1.2", peer: Self.stranger)
        #expect(claims.busLost() == [":1.2", ":1.5"])
        #expect(claims.claimants.isEmpty)
        #expect(claims.busLost() == [])
    }
}
