#ifndef GEOMON_CGPS_SHIM_H
#define GEOMON_CGPS_SHIM_H
/* GPSD_API_MAJOR_VERSION-neutral accessors (static inline), so one Swift source builds against
   gpsd 3.22 (API 11, Debian 12) and newer (API 14+). Swift never touches struct gps_data_t's
   fields directly: where they moved between API versions, only this file changes. */
#include <gps.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>

#if GPSD_API_MAJOR_VERSION < 9
#error "geomon needs libgps API 9 or newer (gpsd >= 3.20)"
#endif

/* A zeroed gps_data_t on the heap; free with geomon_gps_free after geomon_gps_close. */
static inline struct gps_data_t *geomon_gps_new(void) {
    return (struct gps_data_t *)calloc(1, sizeof(struct gps_data_t));
}

static inline void geomon_gps_free(struct gps_data_t *data) { free(data); }

/* 0 on success; on failure -1 with errno or a libgps error code (see geomon_gps_errstr). */
static inline int geomon_gps_open(struct gps_data_t *data, const char *host, const char *port) {
    return gps_open(host, port, data);
}

static inline int geomon_gps_close(struct gps_data_t *data) { return gps_close(data); }

static inline const char *geomon_gps_errstr(int code) { return gps_errstr(code); }

/* Enable (WATCH_ENABLE | WATCH_JSON, WATCH_DEVICE when device is non-NULL) or disable the watch.
   Newer headers define the flags with a cast; the arithmetic stays here. */
static inline int geomon_gps_watch(struct gps_data_t *data, bool enable, const char *device) {
    unsigned int flags;
    if (enable) {
        flags = (unsigned int)(WATCH_ENABLE | WATCH_JSON);
        if (device != NULL) flags |= (unsigned int)WATCH_DEVICE;
    } else {
        flags = (unsigned int)WATCH_DISABLE;
    }
    return gps_stream(data, flags, (void *)device);
}

/* True when a message is buffered or the socket is readable (or closed). */
static inline bool geomon_gps_waiting(struct gps_data_t *data, int timeout_us) {
    return gps_waiting(data, timeout_us);
}

/* Reads one message: > 0 bytes, 0 nothing, -1 error or end of stream. */
static inline int geomon_gps_read(struct gps_data_t *data) {
    return gps_read(data, NULL, 0);
}

static inline int geomon_gps_fd(const struct gps_data_t *data) { return (int)data->gps_fd; }

/* The message of an ERROR answer in the last message read, once (NULL: none): gpsd refusing a
   command, e.g. "Type of /dev/ttyACM0 is unknown." for a ?DEVICE write to a device it has not
   identified. The flag is cleared here, so one answer is reported once. */
static inline const char *geomon_gps_take_error(struct gps_data_t *data) {
    if ((data->set & ERROR_SET) == 0) return NULL;
    data->set &= ~ERROR_SET;
    return data->error;
}

/* Sends one command line to gpsd (e.g. ?DEVICE={...}); 0 on success, -1 with errno. */
static inline int geomon_gps_send(struct gps_data_t *data, const char *command) {
    return gps_send(data, "%s", command);
}

/* The device the last report came from (TPV's "device"), "" when none was named. */
static inline const char *geomon_gps_device_path(const struct gps_data_t *data) { return data->dev.path; }

/* The devices gpsd's last DEVICES message listed (the watch's answer). */
static inline int geomon_gps_listed_device_count(const struct gps_data_t *data) {
    int n = data->devices.ndevices;
    return n < 0 ? 0 : (n > MAXUSERDEVS ? MAXUSERDEVS : n);
}
static inline const char *geomon_gps_listed_device_path(const struct gps_data_t *data, int index) {
    return data->devices.list[index].path;
}

/* What the last message set. */
static inline bool geomon_gps_has_mode(const struct gps_data_t *data) { return (data->set & MODE_SET) != 0; }
static inline bool geomon_gps_has_time(const struct gps_data_t *data) { return (data->set & TIME_SET) != 0; }
static inline bool geomon_gps_has_latlon(const struct gps_data_t *data) { return (data->set & LATLON_SET) != 0; }

static inline int geomon_gps_mode(const struct gps_data_t *data) { return data->fix.mode; }
static inline double geomon_gps_latitude(const struct gps_data_t *data) { return data->fix.latitude; }
static inline double geomon_gps_longitude(const struct gps_data_t *data) { return data->fix.longitude; }
static inline double geomon_gps_eph(const struct gps_data_t *data) { return data->fix.eph; }
static inline double geomon_gps_epx(const struct gps_data_t *data) { return data->fix.epx; }
static inline double geomon_gps_epy(const struct gps_data_t *data) { return data->fix.epy; }
static inline double geomon_gps_speed(const struct gps_data_t *data) { return data->fix.speed; }
static inline double geomon_gps_track(const struct gps_data_t *data) { return data->fix.track; }

/* Fix time as milliseconds since 1970 (timespec_t since API 9). */
static inline long long geomon_gps_time_ms(const struct gps_data_t *data) {
    return (long long)data->fix.time.tv_sec * 1000LL + (long long)(data->fix.time.tv_nsec / 1000000L);
}

#endif
