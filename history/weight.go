package history

// EntriesPerRecord is how many collection members (the strings of a
// record's Fields and Items) weigh as much as one record in a history's
// size (Weight). A history is held in memory and checked whole, and a
// truth record copies its key's whole hash, list or sorted set: behind a
// fair lock's queue of 1,000 waiters one record holds 1,000 members, and
// a read-write lock's hash one field per reader, so that the number of
// records alone no longer measures what a history holds. Measured on
// runs of 1,000 clients with faults (TestSoakMaxima), each record costs
// about 1.3 KB of peak memory and each member 55 to 85 bytes (a fair
// lock's 60 virtual seconds: 154,034 records holding 48.6 million
// members peaked at 4.2 GB; a read-write lock's 30: 215,739 records, 17.7
// million members, 1.2 GB): sixteen members to a record.
const EntriesPerRecord = 16

// Weight is the size of a history of records records holding entries
// collection members, counted in records (EntriesPerRecord members weigh
// one): what the bound on a run's history and on a history file
// (scenario.MaxRecords) is a bound on.
func Weight(records, entries int) int { return records + entries/EntriesPerRecord }

// Entries is the number of collection members r holds, its Fields and its
// Items, and its Value's bytes by ValueBytesPerEntry: a truth record
// copies its key's whole value too, so that a script that appends to a
// key (APPEND, SETRANGE) records a longer string at each change.
func (r *Record) Entries() int { return len(r.Fields) + len(r.Items) + len(r.Value)/ValueBytesPerEntry }

// ValueBytesPerEntry is how many bytes of a record's Value weigh as one
// collection member: a member costs 55 to 85 bytes of peak memory, about
// as much as that much text.
const ValueBytesPerEntry = 64
