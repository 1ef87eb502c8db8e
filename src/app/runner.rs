//! The [`Runner`]: where a command's simulations run. It holds a rayon thread
//! pool of the size asked for (`--threads`), the run's limits as values (the
//! wall-clock deadline of `--max-wall-seconds`) and its progress bar
//! (indicatif, drawn on standard error only when it is a terminal). Every
//! batch of a command goes through one runner, so the pool bounds the
//! simulations running at once however many callers hand batches over (the
//! parts of a fit, the folds of a cross-validation).

use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::error::{Error, Result};

/// Simulation threads at most, whatever is asked; also the top of the
/// binary's `--threads` range, so that every count it accepts is given.
pub const MAX_THREADS: usize = 256;

/// Where the simulations of a command run: a pool of threads, the run's
/// limits and its progress bar. Cloning it shares the pool and the bar.
#[derive(Debug, Clone)]
pub struct Runner {
    pool: std::sync::Arc<rayon::ThreadPool>,
    threads: usize,
    /// No simulation starts after this instant; the bound it came from,
    /// in seconds.
    deadline: Option<(Instant, f64)>,
    /// Runs done of those announced (hidden unless asked for on a terminal).
    progress: Option<ProgressBar>,
}

impl Runner {
    /// A runner of `threads` simulations at once (1 to [`MAX_THREADS`]),
    /// without limits or progress. A pool whose threads cannot be started is
    /// [`Error::Internal`].
    pub fn new(threads: usize) -> Result<Runner> {
        let threads = threads.clamp(1, MAX_THREADS);
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .thread_name(|i| format!("iosim-sim-{i}"))
            .build()
            .map_err(|e| Error::Internal(format!("cannot start the simulation threads: {e}")))?;
        Ok(Runner {
            pool: std::sync::Arc::new(pool),
            threads,
            deadline: None,
            progress: None,
        })
    }

    /// The same runner, bounding the wall-clock time of everything it runs
    /// from now on: no simulation starts after `seconds` from this call;
    /// the one that would is [`Error::WallClock`]. `None`: no bound.
    pub fn with_wall_clock_bound(mut self, seconds: Option<f64>) -> Runner {
        self.deadline = seconds.map(|s| {
            let now = Instant::now();
            let d = Duration::try_from_secs_f64(s).unwrap_or(Duration::MAX);
            let far = now + Duration::from_secs(1 << 40);
            (now.checked_add(d).unwrap_or(far), s)
        });
        self
    }

    /// The same runner, with a progress bar of the runs done on standard
    /// error when `show` and standard error is a terminal (never in a pipe
    /// or a CI log).
    pub fn with_progress(mut self, show: bool) -> Runner {
        use std::io::IsTerminal as _;
        if show && std::io::stderr().is_terminal() {
            let bar = ProgressBar::with_draw_target(Some(0), ProgressDrawTarget::stderr());
            if let Ok(style) =
                ProgressStyle::with_template("{bar:30} {pos}/{len} experiments done, {elapsed}")
            {
                bar.set_style(style);
            }
            self.progress = Some(bar);
        }
        self
    }

    /// Simulations at once.
    pub fn threads(&self) -> usize {
        self.threads
    }

    /// Clears the progress bar, if one is drawn.
    pub fn finish(&self) {
        if let Some(bar) = &self.progress {
            bar.finish_and_clear();
        }
    }

    /// Announces `n` more runs to the progress bar.
    pub(crate) fn announce(&self, n: usize) {
        if let Some(bar) = &self.progress {
            bar.inc_length(n as u64);
        }
    }

    /// One run done, for the progress bar.
    pub(crate) fn done_one(&self) {
        if let Some(bar) = &self.progress {
            bar.inc(1);
        }
    }

    /// The wall-clock deadline, for a simulation to look at as it runs.
    pub(crate) fn deadline(&self) -> crate::sim::Deadline {
        self.deadline
    }

    /// [`Error::WallClock`] if the deadline is past.
    pub(crate) fn check_deadline(&self) -> Result<()> {
        match self.deadline {
            Some((at, seconds)) if Instant::now() >= at => Err(Error::WallClock { seconds }),
            _ => Ok(()),
        }
    }

    /// Runs `job(0)` to `job(n - 1)` in the pool, in that order as places
    /// free up (at most [`Runner::threads`] at once, among every caller of
    /// this runner), and returns their results in index order, or the first
    /// error in that order. A job that panics is a defect in iosim: the
    /// batch fails with [`Error::Internal`], whatever the other jobs gave.
    pub fn run_parallel<T, F>(&self, n: usize, job: F) -> Result<Vec<T>>
    where
        T: Send,
        F: Fn(usize) -> Result<T> + Sync,
    {
        let workers = self.threads.min(n);
        let next = std::sync::atomic::AtomicUsize::new(0);
        let slots: Vec<std::sync::Mutex<Option<Result<T>>>> =
            (0..n).map(|_| std::sync::Mutex::new(None)).collect();
        let panicked: std::sync::Mutex<Option<String>> = std::sync::Mutex::new(None);
        let (job, next, slots, panicked) = (&job, &next, &slots, &panicked);
        self.pool.in_place_scope(|scope| {
            for _ in 0..workers {
                scope.spawn(move |_| loop {
                    let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    if i >= n {
                        return;
                    }
                    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| job(i))) {
                        Ok(r) => *lock(&slots[i]) = Some(r),
                        Err(payload) => {
                            let what = payload
                                .downcast_ref::<&str>()
                                .map(|s| s.to_string())
                                .or_else(|| payload.downcast_ref::<String>().cloned())
                                .unwrap_or_else(|| "no message".into());
                            lock(panicked).get_or_insert(what);
                        }
                    }
                });
            }
        });
        if let Some(what) = lock(panicked).take() {
            return Err(Error::Internal(format!(
                "a simulation thread panicked: {what}"
            )));
        }
        slots
            .iter()
            .map(|s| {
                lock(s).take().unwrap_or_else(|| {
                    Err(Error::Internal("a simulation job gave no result".into()))
                })
            })
            .collect()
    }
}

/// The value behind `m`, whether or not a panicking holder poisoned it.
fn lock<T>(m: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parallel_jobs_come_back_in_index_order_whatever_the_thread_count() {
        for threads in [0, 1, 2, 3, 64, 1000] {
            let runner = Runner::new(threads).unwrap();
            let v = runner.run_parallel(7, |i| Ok(i * 10)).unwrap();
            assert_eq!(v, vec![0, 10, 20, 30, 40, 50, 60], "{threads} threads");
        }
        assert!(Runner::new(2)
            .unwrap()
            .run_parallel(0, Ok)
            .unwrap()
            .is_empty());
    }

    #[test]
    fn the_first_error_in_index_order_is_returned() {
        let e = Runner::new(2)
            .unwrap()
            .run_parallel(5, |i| {
                if i >= 3 {
                    Err(Error::Usage(format!("job {i}")))
                } else {
                    Ok(i)
                }
            })
            .unwrap_err();
        assert_eq!(e.to_string(), "job 3");
    }

    #[test]
    fn a_runner_runs_at_most_its_threads_at_once_whoever_asks() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        let runner = Runner::new(2).unwrap();
        let (inside, most) = (AtomicUsize::new(0), AtomicUsize::new(0));
        // Three callers, each with a batch of its own.
        std::thread::scope(|scope| {
            for _ in 0..3 {
                scope.spawn(|| {
                    runner
                        .run_parallel(6, |_| {
                            let now = inside.fetch_add(1, Ordering::SeqCst) + 1;
                            most.fetch_max(now, Ordering::SeqCst);
                            std::thread::sleep(std::time::Duration::from_millis(2));
                            inside.fetch_sub(1, Ordering::SeqCst);
                            Ok(())
                        })
                        .unwrap();
                });
            }
        });
        let most = most.load(Ordering::SeqCst);
        assert!((1..=2).contains(&most), "{most}");
    }

    #[test]
    fn a_panicking_job_is_an_internal_defect() {
        for threads in [1, 2] {
            let e = Runner::new(threads)
                .unwrap()
                .run_parallel(4, |i| {
                    if i == 1 {
                        panic!("job {i} broke");
                    }
                    Ok(i)
                })
                .unwrap_err();
            assert!(matches!(e, Error::Internal(_)), "{e:?}");
            assert!(e.to_string().contains("job 1 broke"), "{e}");
        }
    }

    #[test]
    fn nothing_starts_after_the_wall_clock_bound() {
        let runner = Runner::new(1).unwrap().with_wall_clock_bound(Some(1e-9));
        std::thread::sleep(std::time::Duration::from_millis(1));
        assert!(matches!(
            runner.check_deadline(),
            Err(Error::WallClock { .. })
        ));
        assert!(Runner::new(1).unwrap().check_deadline().is_ok());
    }
}
