#include "cl/device_caps.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "cl/target.h"

static void dev_string(cl_device_id d, cl_device_info what, char* buf, size_t size) {
  if (cl.clGetDeviceInfo(d, what, size, buf, NULL) != CL_SUCCESS) buf[0] = '\0';
  buf[size - 1] = '\0';
}

static int has_word(const char* hay, const char* needle) {
  size_t n = strlen(needle);
  for (const char* p = strstr(hay, needle); p; p = strstr(p + 1, needle))
    if ((p == hay || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\0')) return 1;
  return 0;
}

int gpu_contains_nocase(const char* hay, const char* needle) {
  size_t n = strlen(needle);
  for (; *hay; ++hay) {
    size_t i = 0;
    while (i < n && hay[i] && tolower((unsigned char)hay[i]) == tolower((unsigned char)needle[i])) ++i;
    if (i == n) return 1;
  }
  return 0;
}

/* The platform name first: PoCL and Oclgrind report the CPU's or no maker
 * as the device vendor, and what matters is whose compiler runs the code. */
static GpuVendor classify(const char* platform, const char* vendor) {
  static const struct {
    const char* word;
    GpuVendor id;
  } kPlatforms[] = {{"Portable Computing Language", GD_VENDOR_POCL}, {"Oclgrind", GD_VENDOR_OCLGRIND}},
    kVendors[] = {{"NVIDIA", GD_VENDOR_NVIDIA}, {"Advanced Micro Devices", GD_VENDOR_AMD}, {"AMD", GD_VENDOR_AMD},
                  {"Intel", GD_VENDOR_INTEL},   {"ARM", GD_VENDOR_ARM},                   {"Qualcomm", GD_VENDOR_QUALCOMM},
                  {"Apple", GD_VENDOR_APPLE}};
  for (size_t i = 0; i < sizeof(kPlatforms) / sizeof(kPlatforms[0]); ++i)
    if (gpu_contains_nocase(platform, kPlatforms[i].word)) return kPlatforms[i].id;
  for (size_t i = 0; i < sizeof(kVendors) / sizeof(kVendors[0]); ++i)
    if (gpu_contains_nocase(vendor, kVendors[i].word)) return kVendors[i].id;
  return GD_VENDOR_OTHER;
}

void gpu_caps_query(cl_platform_id platform, cl_device_id d, GpuCaps* c) {
  memset(c, 0, sizeof(*c));
  if (cl.clGetPlatformInfo(platform, CL_PLATFORM_NAME, sizeof(c->platform), c->platform, NULL) != CL_SUCCESS)
    c->platform[0] = '\0';
  c->platform[sizeof(c->platform) - 1] = '\0';
  dev_string(d, CL_DEVICE_VENDOR, c->vendor, sizeof(c->vendor));
  dev_string(d, CL_DEVICE_NAME, c->name, sizeof(c->name));
  dev_string(d, CL_DEVICE_VERSION, c->version, sizeof(c->version));
  dev_string(d, CL_DRIVER_VERSION, c->driver, sizeof(c->driver));
  dev_string(d, CL_DEVICE_OPENCL_C_VERSION, c->opencl_c, sizeof(c->opencl_c));
  c->cl_c_minor = gpu_opencl_c_minor(c->opencl_c);
  c->vendor_id = classify(c->platform, c->vendor);
  cl_device_type t = 0;
  cl.clGetDeviceInfo(d, CL_DEVICE_TYPE, sizeof(t), &t, NULL);
  c->is_gpu = (t & CL_DEVICE_TYPE_GPU) != 0;
  c->is_cpu = (t & CL_DEVICE_TYPE_CPU) != 0;
  cl.clGetDeviceInfo(d, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof(c->compute_units), &c->compute_units, NULL);
  cl.clGetDeviceInfo(d, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof(c->max_work_group), &c->max_work_group, NULL);
  size_t items[16] = {0};
  if (cl.clGetDeviceInfo(d, CL_DEVICE_MAX_WORK_ITEM_SIZES, sizeof(items), items, NULL) == CL_SUCCESS)
    memcpy(c->max_item, items, sizeof(c->max_item));
  cl_device_local_mem_type lt = CL_GLOBAL;
  cl.clGetDeviceInfo(d, CL_DEVICE_LOCAL_MEM_TYPE, sizeof(lt), &lt, NULL);
  c->local_mem_dedicated = lt == CL_LOCAL;
  cl.clGetDeviceInfo(d, CL_DEVICE_LOCAL_MEM_SIZE, sizeof(c->local_mem), &c->local_mem, NULL);
  cl.clGetDeviceInfo(d, CL_DEVICE_GLOBAL_MEM_SIZE, sizeof(c->global_mem), &c->global_mem, NULL);
  cl.clGetDeviceInfo(d, CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof(c->max_alloc), &c->max_alloc, NULL);
  cl_uint align_bits = 1024;
  cl.clGetDeviceInfo(d, CL_DEVICE_MEM_BASE_ADDR_ALIGN, sizeof(align_bits), &align_bits, NULL);
  c->mem_base_align = align_bits / 8 < 64 ? 64 : align_bits / 8;
  cl.clGetDeviceInfo(d, CL_DEVICE_PREFERRED_VECTOR_WIDTH_FLOAT, sizeof(c->vec_float), &c->vec_float, NULL);
  cl.clGetDeviceInfo(d, CL_DEVICE_PREFERRED_VECTOR_WIDTH_HALF, sizeof(c->vec_half), &c->vec_half, NULL);
  cl_bool images = CL_FALSE;
  cl.clGetDeviceInfo(d, CL_DEVICE_IMAGE_SUPPORT, sizeof(images), &images, NULL);
  c->images = images == CL_TRUE;
  char ext[8192];
  dev_string(d, CL_DEVICE_EXTENSIONS, ext, sizeof(ext));
  snprintf(c->extensions, sizeof(c->extensions), "%s", ext);
  c->fp16 = has_word(ext, "cl_khr_fp16");
  c->subgroups = has_word(ext, "cl_khr_subgroups") || has_word(ext, "cl_intel_subgroups");
  c->command_buffer = has_word(ext, "cl_khr_command_buffer");
}

const char* gpu_vendor_name(GpuVendor v) {
  static const char* const kNames[] = {"other", "nvidia", "amd", "intel", "arm", "qualcomm", "apple", "pocl", "oclgrind"};
  return (unsigned)v < sizeof(kNames) / sizeof(kNames[0]) ? kNames[v] : "other";
}

size_t gpu_caps_format(const GpuCaps* c, char* buf, size_t size) {
  int n = snprintf(buf, size,
                   "vendor_id\t%s\nvendor\t%s\nname\t%s\nplatform\t%s\nversion\t%s\ndriver\t%s\nopencl_c\t%s\ntype\t%s\n"
                   "compute_units\t%u\nmax_work_group_size\t%zu\nmax_work_item_sizes\t%zu,%zu,%zu\n"
                   "local_mem_bytes\t%llu\nlocal_mem_dedicated\t%d\nglobal_mem_bytes\t%llu\nmax_alloc_bytes\t%llu\n"
                   "mem_base_align\t%u\n"
                   "preferred_vector_float\t%u\npreferred_vector_half\t%u\nfp16\t%d\nsubgroups\t%d\nimages\t%d\n"
                   "command_buffer\t%d\nextensions\t%s\n",
                   gpu_vendor_name(c->vendor_id), c->vendor, c->name, c->platform, c->version, c->driver, c->opencl_c,
                   c->is_gpu ? "GPU" : c->is_cpu ? "CPU" : "OTHER", c->compute_units, c->max_work_group,
                   c->max_item[0], c->max_item[1], c->max_item[2], (unsigned long long)c->local_mem,
                   c->local_mem_dedicated, (unsigned long long)c->global_mem, (unsigned long long)c->max_alloc,
                   c->mem_base_align,
                   c->vec_float, c->vec_half, c->fp16, c->subgroups, c->images, c->command_buffer, c->extensions);
  return n > 0 ? (size_t)n : 0;
}
