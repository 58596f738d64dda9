// Who uses an accounting file: gpuslice processes hold a shared flock on it
// for as long as they have it open; a libvgpu.so (HAMi-core) process only
// maps it, which /proc/<pid>/maps shows (device and inode, whatever path
// the process's mount namespace gives the file).
#pragma once

#include <sys/types.h>

#include <functional>
#include <string>
#include <vector>

namespace gpuslice::realgpu {

// True when some process holds a flock on the file (a gpuslice process has
// it open). Takes and drops an exclusive flock without waiting; false when
// the file cannot be opened.
bool file_locked_by_user(const std::string& path);

// Runs `action` while holding the file's flock exclusively, if no process
// holds it (a gpuslice process that starts meanwhile waits for it); false,
// and nothing run, when one does or the file cannot be opened.
bool while_unused(const std::string& path, const std::function<void()>& action);

// Whether `pid` maps the file with that device and inode; false when its
// maps cannot be read (gone, or not ours to read).
bool process_maps_file(pid_t pid, dev_t device, ino_t inode);

// Every process in this /proc that maps the file.
std::vector<pid_t> processes_mapping(dev_t device, ino_t inode);

}  // namespace gpuslice::realgpu
