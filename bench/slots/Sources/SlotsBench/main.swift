import Foundation
import Rule
import Values

// What the daemon computes from every user's time (docs/user-time.md), at 40 zones and 96 or 192
// notify times: building the slots from their keys, and the passes a look and a run make over
// them (`latestFires`, `nextFire`, `runDates`). Medians of 15, in milliseconds.

let zones = [
    "Asia/Shanghai", "Asia/Tokyo", "Asia/Seoul", "Asia/Singapore", "Asia/Kolkata", "Asia/Kathmandu", "Asia/Dubai",
    "Asia/Karachi", "Asia/Dhaka", "Asia/Bangkok", "Asia/Jakarta", "Asia/Manila", "Asia/Tehran", "Asia/Jerusalem",
    "Europe/London", "Europe/Paris", "Europe/Berlin", "Europe/Moscow", "Europe/Istanbul", "Europe/Lisbon",
    "Africa/Cairo", "Africa/Lagos", "Africa/Nairobi", "Africa/Johannesburg", "America/New_York", "America/Chicago",
    "America/Denver", "America/Los_Angeles", "America/Anchorage", "America/Sao_Paulo", "America/Mexico_City",
    "America/Bogota", "America/St_Johns", "Pacific/Honolulu", "Pacific/Auckland", "Pacific/Chatham",
    "Pacific/Kiritimati", "Australia/Sydney", "Australia/Adelaide", "Australia/Perth",
]
let service = DailySchedule(time: TimeOfDay(hour: 9, minute: 0), timeZone: TimeZone(identifier: "Asia/Shanghai")!)

func median(_ body: () -> Void) -> Double {
    var times: [Double] = []
    for _ in 0..<15 {
        let start = DispatchTime.now().uptimeNanoseconds
        body()
        times.append(Double(DispatchTime.now().uptimeNanoseconds - start) / 1e6)
    }
    return times.sorted()[times.count / 2]
}

print("times   build  latestFires  nextFire  runDates   (ms, medians of 15)")
for perDay in [96, 192] {
    let step = 86_400 / perDay
    let keys = zones.flatMap { zone in
        (0..<perDay).map { k in
            let second = k * step
            return "\(zone)|" + String(format: "%02d:%02d:%02d", second / 3600, second / 60 % 60, second % 60)
        }
    }
    var slots = NotifySlots(keys: keys, service: service)
    let build = median { slots = NotifySlots(keys: keys, service: service) }
    var instant = Date()
    // A minute later each time, as the daemon's looks come.
    let latest = median { _ = slots.latestFires(atOrBefore: instant); instant += 60 }
    let next = median { _ = slots.nextFire(after: instant); instant += 60 }
    let dates = median { _ = slots.runDates(at: instant); instant += 60 }
    print(String(format: "%5d  %6.2f  %11.2f  %8.2f  %8.2f", slots.slots.count, build, latest, next, dates))
}
