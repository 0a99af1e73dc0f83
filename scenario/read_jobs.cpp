// `jobs:` several training jobs that share the fabric (run/multi_job.hpp runs them).
#include <set>
#include <string>

#include "scenario/section_readers.hpp"

namespace syncsim::app::yaml_reader {

std::vector<JobSpec> read_jobs(const Reader& in, const YAML::Node& node, const std::string& path) {
  if (!node.IsSequence() || node.size() == 0) {
    in.fail(path, node, "expected a non-empty list of jobs ({name, workload, ...})");
  }
  std::vector<JobSpec> jobs;
  std::set<std::string> names;
  for (std::size_t i = 0; i < node.size(); ++i) {
    const std::string job_path = join_path(path, i);
    const YAML::Node item = node[i];
    const MapView m(in, item, job_path, {"name", "workload", "hosts", "start", "steps"});
    JobSpec job;
    const YAML::Node& name = m.require("name");
    job.name = in.read_string(name, m.path_of("name"));
    if (job.name.empty() || !names.insert(job.name).second) {
      in.fail(m.path_of("name"), name,
              "expected a job name of its own, got " + quoted(job.name) +
                  (job.name.empty() ? "" : " again"));
    }
    const YAML::Node& workload = m.require("workload");
    if (workload.IsMap() && workload["chakra"]) {
      in.fail(m.path_of("workload") + ".chakra", workload["chakra"],
              "expected a training step (a Chakra trace cannot be a job yet), got chakra");
    }
    job.workload = read_workload(in, workload, m.path_of("workload"));
    if (const YAML::Node* h = m.find("hosts")) {
      const std::string hosts_path = m.path_of("hosts");
      if (!h->IsSequence() || h->size() == 0) {
        in.fail(hosts_path, *h, "expected a non-empty list of host numbers");
      }
      for (std::size_t k = 0; k < h->size(); ++k) {
        job.hosts.push_back(in.read_u32((*h)[k], join_path(hosts_path, k)));
      }
      if (workload.IsMap() && workload["placement"]) {
        in.warn(m.path_of("workload") + ".placement",
                "the job lists its hosts, so its placement policy is not used");
      }
    } else if (job.workload.data_parallel == 0) {
      in.fail_at(m.path_of("workload"), workload, m.path_of("workload") + ".data_parallel",
                 "missing key (a job on a shared fabric states its data-parallel size, or lists "
                 "its hosts)");
    }
    if (const YAML::Node* v = m.find("start")) {
      job.start = in.read_time(*v, m.path_of("start"));
      if (job.start < Time::zero()) {
        in.fail(m.path_of("start"), *v, "expected a time at or after 0, got a negative one");
      }
    }
    if (const YAML::Node* v = m.find("steps")) {
      job.steps = in.read_u32(*v, m.path_of("steps"), 1);
    }
    jobs.push_back(std::move(job));
  }
  return jobs;
}

}  // namespace syncsim::app::yaml_reader
