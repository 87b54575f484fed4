//! This process's CPU affinity: reading it (sched_getaffinity) and
//! binding to a set (sched_setaffinity).

/// CPUs in this process's affinity mask, ascending.
pub fn allowed_cpus() -> Vec<usize> {
    // SAFETY: cpu_set_t is plain data; sched_getaffinity fills it.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) != 0 {
            return Vec::new();
        }
        (0..libc::CPU_SETSIZE as usize).filter(|&c| libc::CPU_ISSET(c, &set)).collect()
    }
}

/// Restricts this process to `cpus`: every thread it has now (the watchdog
/// may already run) and, by inheritance, every thread it creates later.
pub fn bind(cpus: &[usize]) -> std::io::Result<()> {
    let tids: Vec<libc::pid_t> = std::fs::read_dir("/proc/self/task")
        .map(|d| d.filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok()).collect())
        .unwrap_or_default();
    for tid in tids {
        // A thread that ended meanwhile is fine to miss.
        match bind_task(tid, cpus) {
            Err(e) if e.raw_os_error() == Some(libc::ESRCH) => {}
            other => other?,
        }
    }
    bind_task(0, cpus)
}

/// The CPUs of NUMA node `node` (sysfs), within this process's mask.
pub fn numa_node_cpus(node: usize) -> Option<Vec<usize>> {
    let text = std::fs::read_to_string(format!("/sys/devices/system/node/node{node}/cpulist")).ok()?;
    let cpus = super::cpuset::parse_list(text.trim()).ok()?;
    let allowed = allowed_cpus();
    let usable: Vec<usize> = cpus.into_iter().filter(|c| allowed.contains(c)).collect();
    (!usable.is_empty()).then_some(usable)
}

/// Binds the calling thread alone to the CPUs of NUMA node `node`, so
/// that memory it touches first lies on that node; the CPUs bound to (as
/// a list), or None where the node has none this process may use or the
/// binding is refused.
pub fn bind_thread_to_numa_node(node: usize) -> Option<String> {
    let cpus = numa_node_cpus(node)?;
    bind_task(0, &cpus).ok()?;
    Some(super::cpuset::format_list(&cpus))
}

fn bind_task(tid: libc::pid_t, cpus: &[usize]) -> std::io::Result<()> {
    // SAFETY: cpu_set_t is plain data; CPU_SET only touches bits below
    // CPU_SETSIZE, which we check first.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        for &c in cpus {
            if c >= libc::CPU_SETSIZE as usize {
                return Err(std::io::Error::other(format!("cpu {c} is beyond what the kernel interface can name")));
            }
            libc::CPU_SET(c, &mut set);
        }
        if libc::sched_setaffinity(tid, std::mem::size_of::<libc::cpu_set_t>(), &set) != 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_has_cpus() {
        assert!(!allowed_cpus().is_empty());
    }
}
