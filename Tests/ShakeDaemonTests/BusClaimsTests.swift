// SPDX-License-Identifier: Apache-2.0
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

/// Who hears the signals and may read the properties, and a caller as the bus records it.
struct BusAudienceTests {
    static let member = BusClaims.peer(uid: 1000, groups: [27, 1000])
    static let stranger = BusClaims.peer(uid: 1001, groups: [1001])

    @Test func underEveryoneTheSignalsAreBroadcast() {
        var claims = BusClaims(rule: .everyone)
        _ = claims.call("Claim", client: ":1.5", peer: Self.stranger)
        #expect(claims.audience == .everyone)
        #expect(claims.mayRead(Self.stranger))
    }

    /// A narrower rule: only the claimants hear, and only those it allows may read; a reload that narrows it takes
    /// the stranger's claim, and with it the signals.
    @Test func underANarrowerRuleOnlyTheClaimantsHear() {
        var claims = BusClaims(rule: .everyone)
        _ = claims.call("Claim", client: ":1.9", peer: Self.stranger)
        _ = claims.call("Claim", client: ":1.5", peer: Self.member)
        #expect(claims.ruleChanged(BusClaimsTests.groupRule) == [":1.9"])
        #expect(claims.audience == .claimants([":1.5"]))
        #expect(claims.mayRead(Self.member) && !claims.mayRead(Self.stranger))
        #expect(claims.mayRead(BusClaims.peer(uid: 0, groups: [])), "root may always")
        // Listening without a claim is hearing nothing: nobody claims, nobody hears.
        _ = claims.call("Release", client: ":1.5", peer: Self.member)
        #expect(claims.audience == .claimants([]))
    }

    /// The bus names the groups as one set: any of them matches a rule's group, and the primary gid is none.
    @Test func everyGroupTheBusNamesCountsAndNoOtherDoes() {
        let peer = BusClaims.peer(uid: 1000, groups: [5, 27, 1000])
        #expect(peer.supplementaryGroups == [5, 27, 1000] && peer.gid == UInt32.max)
        #expect(PeerRule(users: [], groups: [27]).allows(peer))
        #expect(!PeerRule(users: [], groups: [28]).allows(peer))
        #expect(!PeerRule(users: [], groups: [0]).allows(BusClaims.peer(uid: 1000, groups: [])))
    }
}
